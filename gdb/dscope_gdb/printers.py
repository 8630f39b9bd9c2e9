"""GDB pretty-printers for the runtime's types (filled in by the printers work)."""


def install(inspect):
    pass
