"""Bumble peers of the third-party tier: a TI SensorTag accelerometer, an extended advertiser,
an L2CAP CoC echo server and a GATT server with the edge cases a real stack produces.

Each peer is a plain object around a powered Bumble `Device` (tier.bumble_device); the
scenarios of run.py start them, drive them and read what they counted.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal

from bumble import l2cap
from bumble.att import ATT_Error, Attribute
from bumble.core import UUID, AdvertisingData
from bumble.device import AdvertisingEventProperties, AdvertisingParameters, Device
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.hci import OwnAddressType

RW = Attribute.READABLE | Attribute.WRITEABLE
P = Characteristic.Properties


def sensortag_uuid(short: int) -> str:
    return f'F000{short:04X}-0451-4000-B000-000000000000'


ACCEL_SERVICE, ACCEL_DATA, ACCEL_ENABLED, ACCEL_PERIOD = (sensortag_uuid(u) for u in (0xAA10, 0xAA11, 0xAA12, 0xAA13))


def ad(*structures: tuple[int, bytes]) -> bytes:
    return bytes(AdvertisingData(list(structures)))


async def advertise_legacy(device: Device, uuid: str, name: str, own_address_type: int = OwnAddressType.PUBLIC,
                           auto_restart: bool = True) -> None:
    """Connectable legacy advertising (from the public address unless told otherwise; restarted
    after each link unless `auto_restart` is false): flags and the 128-bit service UUID in the
    advertisement, the name in the scan response (legacy data is at most 31 bytes)."""
    await device.start_advertising(
        own_address_type=own_address_type, auto_restart=auto_restart,
        advertising_data=ad((AdvertisingData.FLAGS, bytes([0x06])),
                            (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, bytes(UUID(uuid)))),
        scan_response_data=ad((AdvertisingData.COMPLETE_LOCAL_NAME, name.encode())))


# MARK: - SensorTag

class SensorTag:
    """The accelerometer service of a TI SensorTag (AA10: data AA11 read + notify, enabled AA12,
    period AA13). Each sample carries its sequence number in its three raw bytes (little-endian),
    so the central's output shows any sample lost or delivered twice. With `drop_after`, the peer
    disconnects once after that many notifications (advertising restarts by itself), then goes
    on counting when the central is back."""

    def __init__(self, device: Device, drop_after: int | None = None) -> None:
        self.device, self.drop_after = device, drop_after
        self.sent = 0
        self.enabled = 0
        self.period_raw = 10
        self.subscribed = False
        self.dropped = False
        self.connections = 0
        self.data = Characteristic(ACCEL_DATA, P.READ | P.NOTIFY, Attribute.READABLE,
                                   CharacteristicValue(read=lambda _c: self.sample(self.sent)))
        enabled = Characteristic(ACCEL_ENABLED, P.READ | P.WRITE, RW,
                                 CharacteristicValue(read=lambda _c: bytes([self.enabled]), write=self._set_enabled))
        period = Characteristic(ACCEL_PERIOD, P.READ | P.WRITE, RW,
                                CharacteristicValue(read=lambda _c: bytes([self.period_raw]), write=self._set_period))
        device.add_service(Service(ACCEL_SERVICE, [self.data, enabled, period]))
        self.data.on('subscription', self._subscription)
        device.on('connection', self._connected)
        self.task: asyncio.Task | None = None

    @staticmethod
    def sample(n: int) -> bytes:
        return n.to_bytes(3, 'little')

    def _connected(self, _connection) -> None:
        self.connections += 1

    def _set_enabled(self, _c, value: bytes) -> None:
        self.enabled = value[0] if value else 0

    def _set_period(self, _c, value: bytes) -> None:
        self.period_raw = value[0] if value else 10

    def _subscription(self, _connection, notify: bool, indicate: bool) -> None:
        self.subscribed = notify or indicate

    async def start(self) -> None:
        await advertise_legacy(self.device, ACCEL_SERVICE, 'SensorTag')
        self.task = asyncio.create_task(self._stream())

    async def _stream(self) -> None:
        while True:
            await asyncio.sleep(max(10, 10 * self.period_raw) / 1000)
            if not (self.enabled and self.subscribed and self.device.connections):
                continue
            self.sent += 1
            await self.device.notify_subscribers(self.data, self.sample(self.sent))
            if self.sent == 5 and os.environ.get('BLUECAP_THIRDPARTY_BREAK') == 'duplicate-sample':
                # the check's own check: a sample sent twice must make "no sample twice" fail
                await self.device.notify_subscribers(self.data, self.sample(self.sent))
            if self.drop_after and self.sent == self.drop_after and not self.dropped:
                self.dropped = True
                self.subscribed = False
                for connection in list(self.device.connections.values()):
                    with contextlib.suppress(Exception):
                        await connection.disconnect()

    def stop(self) -> None:
        if self.task:
            self.task.cancel()


# MARK: - extended advertising

async def advertise_extended(device: Device, data: bytes) -> None:
    """Connectable, non-scannable advertising with extended PDUs only (no legacy PDU can carry
    more than 31 bytes), from the public address."""
    params = AdvertisingParameters(
        advertising_event_properties=AdvertisingEventProperties(is_connectable=True, is_scannable=False, is_legacy=False),
        own_address_type=OwnAddressType.PUBLIC)
    await device.create_advertising_set(advertising_parameters=params, advertising_data=data)


# MARK: - L2CAP CoC echo

class L2CAPEcho:
    """An LE credit-based channel server that sends back what it receives, counting bytes."""

    def __init__(self, device: Device, psm: int = 0x0081, mtu: int = 2048, max_credits: int = 64) -> None:
        self.received = 0
        self.channels = 0
        self.server = device.create_l2cap_server(
            spec=l2cap.LeCreditBasedChannelSpec(psm=psm, mtu=mtu, max_credits=max_credits), handler=self._channel)
        self.psm = self.server.psm

    def _channel(self, channel) -> None:
        self.channels += 1

        def on_data(data: bytes) -> None:
            self.received += len(data)
            channel.write(data)
        channel.sink = on_data


# MARK: - pairing

class Pairing:
    """Bumble's SMP as a peer answering pairing with one IO capability (bonding, LE Secure
    Connections), counting what happened. With `accept=False` it refuses every request."""
    NO_IO, DISPLAY_ONLY, DISPLAY_YES_NO, KEYBOARD_ONLY = 0x03, 0x00, 0x01, 0x02

    def __init__(self, device: Device, io: int, accept: bool = True, passkey: int | None = None) -> None:
        from bumble.pairing import PairingConfig, PairingDelegate
        self.completed = self.bonded = False
        self.count = 0   # pairings completed
        self.failure = None
        self.compared: int | None = None
        self.typed: int | None = None
        self.shown = None   # the scanner's Proc: a keyboard-only peer reads the passkey it printed
        outer = self
        io_map = {self.NO_IO: PairingDelegate.NO_OUTPUT_NO_INPUT, self.DISPLAY_ONLY: PairingDelegate.DISPLAY_OUTPUT_ONLY,
                  self.DISPLAY_YES_NO: PairingDelegate.DISPLAY_OUTPUT_AND_YES_NO_INPUT,
                  self.KEYBOARD_ONLY: PairingDelegate.KEYBOARD_INPUT_ONLY}

        class Delegate(PairingDelegate):
            async def accept(self) -> bool:
                return accept

            async def confirm(self, auto: bool = False) -> bool:
                return accept

            async def compare_numbers(self, number: int, digits: int) -> bool:
                outer.compared = number
                return accept

            async def generate_passkey(self) -> int:
                return passkey if passkey is not None else await super().generate_passkey()

            async def get_number(self) -> int | None:
                proc = outer.shown
                ev = await proc.wait_event(lambda e: e.get('event') == 'passkey', 30) if proc else None
                outer.typed = ev.get('passkey') if ev else None
                return outer.typed

        device.pairing_config_factory = lambda _c: PairingConfig(sc=True, mitm=io != self.NO_IO, bonding=True,
                                                                 delegate=Delegate(io_capability=io_map[io]))

        def on_connection(connection) -> None:
            def paired(keys) -> None:
                outer.completed = True
                outer.count += 1
                outer.bonded = keys is not None and (keys.ltk is not None or getattr(keys, 'ltk_peripheral', None) is not None)

            def failed(reason) -> None:
                outer.failure = reason
            connection.on('pairing', paired)
            connection.on('pairing_failure', failed)
        device.on('connection', on_connection)


# MARK: - privacy

class PrivacyPeer:
    """A peer that uses BLE privacy: a SensorTag (its accelerometer service to read) advertising,
    connectable, from a resolvable private address made from its IRK, a new one each time a link
    ends (Bumble's own rotation does not run while it advertises), and bonding with Just Works,
    handing over its IRK and its public identity address (Bumble's default key distribution).
    `encrypted` counts the links whose encryption came up (a reconnection of a bond encrypts with
    the stored keys, with no pairing)."""

    def __init__(self, device: Device, name: str) -> None:
        from bumble.hci import Address
        self.device, self.name, self.Address = device, name, Address
        self.tag = SensorTag(device)
        self.pairing = Pairing(device, Pairing.NO_IO)
        self.addresses: list[str] = []
        self.links = 0
        self.encrypted = 0   # links encrypted (with a pairing's keys or stored ones)

        def on_connection(connection) -> None:
            self.links += 1
            connection.on('disconnection', lambda _reason: asyncio.ensure_future(self.advertise()))

            def on_encryption() -> None:
                if connection.encryption:
                    self.encrypted += 1
            connection.on('connection_encryption_change', on_encryption)
        device.on('connection', on_connection)

    async def advertise(self) -> None:
        """Advertises from a new resolvable private address."""
        with contextlib.suppress(Exception):
            await self.device.stop_advertising()
        self.device.random_address = self.Address.generate_private_address(self.device.irk)
        self.addresses.append(str(self.device.random_address).split('/')[0])
        await advertise_legacy(self.device, ACCEL_SERVICE, self.name, own_address_type=OwnAddressType.RANDOM,
                               auto_restart=False)


# MARK: - GATT edge cases

def edge_uuid(short: int) -> str:
    return f'B1CA{short:04X}-0451-4000-B000-000000000000'


class GattEdge:
    """The GATT server of the VMTests' ThirdPartyGATTTests: a 400-byte readable and writable value
    (long reads, prepared writes at a small MTU), a read answered with ATT error 0x80, a read
    whose first request is never answered (60 s, past bluetoothd's 30 s ATT timeout), and an
    indicate-only characteristic that sends 1..5 once indications are on. `mtu` caps the ATT MTU
    the server accepts (23: every value above 20 bytes takes several requests).

    The database also changes on demand, as a firmware that adds or drops a feature at run time:
    the last service is B1CA0100 (char B1CA0101 reads b'before'); a write to B1CA0007 replaces
    it, at the same handles, with B1CA0200 (B1CA0201 reads b'after'), the next write puts the
    first back, and each swap is indicated to the writer as Service Changed over the service's
    first handle to 0xFFFF, as the specification asks of a server, only when the client
    subscribed to it (`changes_indicated`; `changes_unsubscribed` counts swaps nobody heard)."""

    def __init__(self, device: Device, mtu: int = 517) -> None:
        self.long_value = bytes(i % 251 for i in range(400))
        self.silent_reads = 0
        self.indicated = 0
        device.gatt_server.max_mtu = mtu
        long_char = Characteristic(edge_uuid(1), P.READ | P.WRITE, RW,
                                   CharacteristicValue(read=lambda _c: self.long_value, write=self._write_long))
        error_char = Characteristic(edge_uuid(2), P.READ, Attribute.READABLE, CharacteristicValue(read=self._read_error))
        silent_char = Characteristic(edge_uuid(3), P.READ, Attribute.READABLE, CharacteristicValue(read=self._read_silent))
        self.indicate_char = Characteristic(edge_uuid(4), P.INDICATE, Attribute.READABLE, bytes([0]))
        self.flood_char = Characteristic(edge_uuid(5), P.NOTIFY, Attribute.READABLE, bytes(4))
        self.flooded = 0
        self.flood_done = False
        flood_count = Characteristic(edge_uuid(6), P.READ, Attribute.READABLE,
                                     CharacteristicValue(read=lambda _c: (self.flooded if self.flood_done else 0xFFFFFFFF).to_bytes(4, 'little')))
        swap_char = Characteristic(edge_uuid(7), P.WRITE, Attribute.WRITEABLE, CharacteristicValue(write=self._write_swap))
        device.add_service(Service(edge_uuid(0), [long_char, error_char, silent_char, self.indicate_char,
                                                  self.flood_char, flood_count, swap_char]))
        self.swaps = self.changes_indicated = self.changes_unsubscribed = 0
        # last in the database: a swap takes it out and puts the other in at the same handles
        self.swappable = self._swappable()
        device.add_service(self.swappable)
        self.indicate_char.on('subscription', self._subscription)
        self.flood_char.on('subscription', self._flood_subscription)
        self.device = device

    def _write_long(self, _c, value: bytes) -> None:
        self.long_value = bytes(value)

    def _swappable(self) -> Service:
        """B1CA0100 (reads b'before') after an even number of swaps, B1CA0200 (b'after') after
        an odd one."""
        base, value = (0x200, b'after') if self.swaps % 2 else (0x100, b'before')
        return Service(edge_uuid(base), [Characteristic(edge_uuid(base + 1), P.READ, Attribute.READABLE, value)])

    def _write_swap(self, connection, _value: bytes) -> None:
        # after the Write Response has gone out: the indication comes as a separate event
        asyncio.get_running_loop().call_later(0.2, lambda: asyncio.ensure_future(self._swap(connection)))

    async def _swap(self, connection) -> None:
        server = self.device.gatt_server
        first = self.swappable.handle
        server.attributes = [a for a in server.attributes if a.handle < first]
        server.attributes_by_handle.clear()
        server.services.remove(self.swappable)
        self.swaps += 1
        self.swappable = self._swappable()
        server.add_service(self.swappable)
        changed = self.device.gatt_service.service_changed_characteristic
        if not server.subscribers.get(connection, {}).get(changed.handle):
            self.changes_unsubscribed += 1
            return
        await self.device.indicate_subscriber(connection, changed, first.to_bytes(2, 'little') + (0xFFFF).to_bytes(2, 'little'))
        self.changes_indicated += 1

    @staticmethod
    def _read_error(_c) -> bytes:
        raise ATT_Error(0x80)

    async def _read_silent(self, _c) -> bytes:
        self.silent_reads += 1
        if self.silent_reads == 1:
            await asyncio.sleep(60)
        return b'ok'

    def _subscription(self, connection, _notify: bool, indicate: bool) -> None:
        if indicate:
            asyncio.ensure_future(self._indicate(connection))

    def _flood_subscription(self, connection, notify: bool, _indicate: bool) -> None:
        if notify and not self.flooded:
            asyncio.ensure_future(self._flood(connection))

    async def _flood(self, connection, seconds: float = 10) -> None:
        """Notifies as fast as the link takes them for `seconds`, each value its sequence number;
        the count is then readable. "As fast as the link takes them": at most 8 ACL packets
        waiting in Bumble's host queue (it would otherwise queue without bound, and everything
        else on the link, the count's read among it, would wait behind the backlog)."""
        loop = asyncio.get_running_loop()
        queue = self.device.host.le_acl_packet_queue or self.device.host.acl_packet_queue
        end = loop.time() + seconds
        while loop.time() < end and connection.handle in self.device.connections:
            while queue.pending > 8:
                flowed = asyncio.Event()
                queue.once('flow', flowed.set)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(flowed.wait(), 5)
            self.flooded += 1
            await self.device.notify_subscriber(connection, self.flood_char, self.flooded.to_bytes(4, 'little'))
        self.flood_done = True

    async def _indicate(self, connection) -> None:
        await asyncio.sleep(0.5)
        for n in range(1, 6):
            await self.device.indicate_subscriber(connection, self.indicate_char, bytes([n]))
            self.indicated += 1


# MARK: - link faults

class Vanisher:
    """A peer that vanishes in the middle of a write, as one does when it goes out of range: each
    write to B1CA0011 is never answered; the link to the central goes down as on a supervision
    timeout (the bridge, told with SIGUSR1 at `bridge_pid`, takes it down and reports reason 0x08
    to the kernel); the peer stays silent, not advertising, for `away` seconds, then advertises
    again and takes the central's reconnection. B1CA0012 reads b'here'. Service B1CA0000, as
    GattEdge's, so that the VMTests find it the same way."""

    def __init__(self, device: Device, bridge_pid: int, away: float = 5.0) -> None:
        self.device, self.bridge_pid, self.away = device, bridge_pid, away
        self.vanished = 0
        self.links = 0
        vanish = Characteristic(edge_uuid(0x11), P.WRITE, Attribute.WRITEABLE, CharacteristicValue(write=self._vanish))
        here = Characteristic(edge_uuid(0x12), P.READ, Attribute.READABLE, b'here')
        device.add_service(Service(edge_uuid(0), [vanish, here]))

        def on_connection(connection) -> None:
            self.links += 1
            connection.on('disconnection', lambda _reason: asyncio.ensure_future(self._return()))
        device.on('connection', on_connection)

    async def advertise(self) -> None:
        await advertise_legacy(self.device, edge_uuid(0), 'Vanisher', auto_restart=False)

    async def _vanish(self, _connection, _value: bytes) -> None:
        self.vanished += 1
        os.kill(self.bridge_pid, signal.SIGUSR1)
        await asyncio.sleep(60)   # never answered: the link is gone long before

    async def _return(self) -> None:
        await asyncio.sleep(self.away if self.vanished else 0)
        with contextlib.suppress(Exception):
            await self.advertise()

