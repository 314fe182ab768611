"""Hardware: the electronic dice tray (see ../shared/dicetray-protocol.md).

The parser, the serial link and the emulator arrive with the dice tray issue;
until then dice are typed in or rolled virtually by the companion.
"""
