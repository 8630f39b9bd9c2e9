"""GDB convenience functions ($dispatch_op_is, $dispatch_key) (filled in by the printers work)."""


def install(inspect):
    pass
