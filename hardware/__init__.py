"""Hardware: the electronic dice tray (see ../shared/dicetray-protocol.md, version 2;
docs/dicetray.md): the line parser (`protocol`), the serial link (`link`) and an
emulator that plays a tray on a real pseudo-terminal with faults (`emulator`).
"""
