// CMosquitto: libmosquitto (Debian libmosquitto-dev, pkg-config libmosquitto), for the ble-gateway
// example alone. Only Examples/GatewayCore/LibMosquitto.swift imports it.
#ifndef BLUECAP_CMOSQUITTO_SHIM_H
#define BLUECAP_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#endif
