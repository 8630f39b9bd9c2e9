# Sources of the aten-like op library and the autograd engine (part of libdscope_runtime).
set(DSCOPE_ATEN_SOURCES
  Functions.cpp
  checks.cpp
  cpu_kernels.cpp
  meta_kernels.cpp
  composite.cpp
  autocast.cpp
  fallbacks.cpp
  autograd_engine.cpp
  autograd_variable_type.cpp
)
