#!/usr/bin/env python3
"""Joins one RootCanal controller to the kernel: hci_bridge.py CONTROLLER-SPEC HOST-SPEC, e.g.
`tcp-client:127.0.0.1:6402 vhci` (Bumble transport specs).

What `bumble-hci-bridge` does, with two differences the tier needs:
- the controller side (RootCanal's TCP port) is opened first, then vhci: opening vhci makes the
  kernel send its HCI Reset at once, and with no controller behind it the init fails (-110);
- two commands the kernel sends and RootCanal 1.10.0 lists as supported but does not implement
  are answered here: Write Authenticated Payload Timeout (after every LE encryption; RootCanal
  aborts on it, "Unimplemented command WRITE_AUTHENTICATED_PAYLOAD_TIMEOUT", which ended every
  pairing with its radio) with success, and LE Read Transmit Power (in the kernel's controller
  init with the BL654 profile steps/thirdparty selects; "unknown command" there fails the init)
  with the nRF52840's range, -20 to +8 dBm.
Packets are relayed as bytes, unparsed (bumble-hci-bridge decodes and traces each one, which under
TCG costs more than the relay), but for the few events that follow the LE links.

SIGUSR1 takes every LE link down as a supervision timeout would: RootCanal models no timeout for a
peer that stops answering, so the bridge asks it to disconnect each link (HCI Disconnect, the peer
sees "remote user terminated") and reports the end to the kernel with reason 0x08, Connection
Timeout; RootCanal's Command Status for that Disconnect, which the kernel never sent, is dropped.
"""
import asyncio
import signal
import sys

from bumble.transport import open_transport

HCI_COMMAND, HCI_EVENT, COMMAND_COMPLETE = 0x01, 0x04, 0x0E
DISCONNECTION_COMPLETE, COMMAND_STATUS, LE_META = 0x05, 0x0F, 0x3E
# LE Connection Complete, LE Enhanced Connection Complete (v1, v2): subevent, status, handle
LE_CONNECTION_COMPLETES = (0x01, 0x0A, 0x29)
DISCONNECT = 0x0406                            # OGF 0x01, OCF 0x006
REMOTE_USER_TERMINATED, CONNECTION_TIMEOUT = 0x13, 0x08
WRITE_AUTHENTICATED_PAYLOAD_TIMEOUT = 0x0C7C   # OGF 0x03, OCF 0x07C
LE_READ_TRANSMIT_POWER = 0x204B                # OGF 0x08, OCF 0x04B
# The commands answered here: opcode -> (the command's least length with its H4 type byte, the
# Command Complete's return parameters made from the command).
ANSWERED = {
    # status success, the connection handle
    WRITE_AUTHENTICATED_PAYLOAD_TIMEOUT: (6, lambda command: b'\x00' + command[4:6]),
    # status success, min -20 dBm, max +8 dBm (the BL654's range)
    LE_READ_TRANSMIT_POWER: (4, lambda command: bytes([0x00, 0xEC, 0x08])),
}


async def main(controller_spec: str, host_spec: str) -> None:
    async with await open_transport(controller_spec) as controller:
        async with await open_transport(host_spec) as host:
            class ToController:
                def on_packet(self, packet: bytes) -> None:
                    least, answer = ANSWERED.get(int.from_bytes(packet[1:3], 'little'), (0, None)) if packet[0] == HCI_COMMAND else (0, None)
                    if answer and len(packet) >= least:
                        # Command Complete: 1 command allowed, the opcode, the return parameters
                        parameters = bytes([1]) + packet[1:3] + answer(packet)
                        host.sink.on_packet(bytes([HCI_EVENT, COMMAND_COMPLETE, len(parameters)]) + parameters)
                        return
                    controller.sink.on_packet(packet)

            links: set[int] = set()        # LE connection handles up
            vanishing: set[int] = set()    # taken down by SIGUSR1: reported as a timeout
            own_statuses = 0               # Command Status events of our Disconnects to drop

            class ToHost:
                def on_packet(self, packet: bytes) -> None:
                    nonlocal own_statuses
                    if packet[0] == HCI_EVENT and len(packet) >= 3:
                        code = packet[1]
                        if code == LE_META and len(packet) >= 7 and packet[3] in LE_CONNECTION_COMPLETES and packet[4] == 0:
                            links.add(int.from_bytes(packet[5:7], 'little') & 0x0FFF)
                        elif code == DISCONNECTION_COMPLETE and len(packet) >= 7:
                            handle = int.from_bytes(packet[4:6], 'little') & 0x0FFF
                            links.discard(handle)
                            if handle in vanishing:
                                vanishing.discard(handle)
                                packet = packet[:6] + bytes([CONNECTION_TIMEOUT]) + packet[7:]
                                print(f'hci_bridge: link {handle:#06x} down, reported as a supervision timeout (0x08)', flush=True)
                        elif code == COMMAND_STATUS and len(packet) >= 7 and own_statuses \
                                and int.from_bytes(packet[5:7], 'little') == DISCONNECT:
                            own_statuses -= 1
                            return
                    host.sink.on_packet(packet)

            def vanish() -> None:
                nonlocal own_statuses
                print(f'hci_bridge: SIGUSR1: taking down {len(links)} LE link(s) as a supervision timeout', flush=True)
                for handle in sorted(links - vanishing):
                    vanishing.add(handle)
                    own_statuses += 1
                    controller.sink.on_packet(bytes([HCI_COMMAND]) + DISCONNECT.to_bytes(2, 'little') + bytes([3])
                                              + handle.to_bytes(2, 'little') + bytes([REMOTE_USER_TERMINATED]))

            host.source.set_packet_sink(ToController())
            controller.source.set_packet_sink(ToHost())
            asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, vanish)
            print('hci_bridge: relaying', controller_spec, '<->', host_spec, flush=True)
            await asyncio.get_running_loop().create_future()


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit('usage: hci_bridge.py CONTROLLER-SPEC HOST-SPEC (e.g. tcp-client:127.0.0.1:6402 vhci)')
    asyncio.run(main(sys.argv[1], sys.argv[2]))
