# Sources of the aten-like op library and the autograd engine (part of libdscope_runtime).
set(DSCOPE_ATEN_SOURCES
)
