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
TCG costs more than the relay).
"""
import asyncio
import sys

from bumble.transport import open_transport

HCI_COMMAND, HCI_EVENT, COMMAND_COMPLETE = 0x01, 0x04, 0x0E
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

            class ToHost:
                def on_packet(self, packet: bytes) -> None:
                    host.sink.on_packet(packet)

            host.source.set_packet_sink(ToController())
            controller.source.set_packet_sink(ToHost())
            print('hci_bridge: relaying', controller_spec, '<->', host_spec, flush=True)
            await asyncio.get_running_loop().create_future()


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit('usage: hci_bridge.py CONTROLLER-SPEC HOST-SPEC (e.g. tcp-client:127.0.0.1:6402 vhci)')
    asyncio.run(main(sys.argv[1], sys.argv[2]))
