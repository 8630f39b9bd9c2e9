# gdb and lldb-16 print the same text: each test runs one list of DispatchScope commands in both
# debuggers on the same target (a crash test's kernel core, a core gdb writes, or one live
# process) and diffs each command's output (tests/e2e/compare_debuggers.py says how, and which
# normalization rules exist). Included from tests/CMakeLists.txt when dscope_lldb is built; E2E,
# DSCOPE_CORES, GDB_SCRIPT and Python3_EXECUTABLE come from there.
#
#   dscope_compare_test(NAME PROGRAM sample
#     (CORE_OF crash_test | GCORE_AT function | LAUNCH [BREAK function [UP n] | EXITS] | ATTACH_AFTER text [ATTACH_COUNT n])
#     CMD command... [ARGS program arguments...])
function(dscope_compare_test name)
  cmake_parse_arguments(T "LAUNCH;EXITS" "PROGRAM;CORE_OF;GCORE_AT;BREAK;UP;ATTACH_AFTER;ATTACH_COUNT;ATTACH_DELAY" "CMD;ARGS" ${ARGN})
  set(command ${Python3_EXECUTABLE} ${E2E}/compare_debuggers.py --gdb-script ${GDB_SCRIPT}
      --lldb-plugin $<TARGET_FILE:dscope_lldb> --program $<TARGET_FILE:${T_PROGRAM}> --timeout 60)
  if(T_CORE_OF)
    list(APPEND command --core ${DSCOPE_CORES}/${T_CORE_OF}.core)
  elseif(T_GCORE_AT)
    list(APPEND command --gcore-at ${T_GCORE_AT})
  elseif(T_LAUNCH)
    list(APPEND command --launch)
    if(T_BREAK)
      list(APPEND command --break ${T_BREAK})
    endif()
    if(T_UP)
      list(APPEND command --up ${T_UP})
    endif()
    if(T_EXITS)
      list(APPEND command --exits)
    endif()
  elseif(T_ATTACH_AFTER)
    list(APPEND command --attach-after ${T_ATTACH_AFTER})
    if(T_ATTACH_COUNT)
      list(APPEND command --attach-count ${T_ATTACH_COUNT})
    endif()
    if(T_ATTACH_DELAY)
      list(APPEND command --attach-delay ${T_ATTACH_DELAY})
    endif()
  else()
    message(FATAL_ERROR "dscope_compare_test(${name}): no target (CORE_OF, GCORE_AT, LAUNCH or ATTACH_AFTER)")
  endif()
  foreach(c ${T_CMD})
    list(APPEND command --cmd ${c})
  endforeach()
  if(T_ARGS)
    list(APPEND command --args ${T_ARGS})
  endif()
  add_test(NAME ${name} COMMAND ${command})
  set_tests_properties(${name} PROPERTIES LABELS "compare" TIMEOUT 300)
  if(T_CORE_OF)
    set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED ${T_CORE_OF})
  endif()
endfunction()

# Bad input every scenario shares: one "dscope: ..." line each, the same in both: a raw value over
# 64 bits; words as LLDB splits them (an empty one, an unterminated quote, two values where one
# goes, which LLDB's fix-its would have turned into "0x1; 0x2"); an option given twice; a count
# that is no number. The last two are no mistakes: quoted words echoed back, the same in both.
set(DSCOPE_COMPARE_BAD_INPUT
  "op-table aten::mmm" "op-table" "keyset garbage+" "keyset --bogus" "dispatch-trace --bogus"
  "dispatch-trace --thread 999" "op-table aten::mm --key NoSuchKey" "keyset 0x10000000000000000"
  "keyset ''" "keyset \"unterminated" "keyset 0x1 0x2" "op-table aten::mm --key ''"
  "keyset --tls --explain 0x1 --explain 0x2" "dispatch-trace --frames --max-frames -5"
  "dispatch-trace --frames --max-frames 1e3" "op-table --list 'a b'" "op-table --list \"it\\\"s\"")
# On a core nothing can be armed: "dscope: cannot write memory ...".
list(APPEND DSCOPE_COMPARE_BAD_INPUT_CORE ${DSCOPE_COMPARE_BAD_INPUT} "dispatch-break aten::mm")
# A CPU tensor that requires grad (CPU, ADInplaceOrView, AutogradCPU, AutocastCPU), a raw value
# with a bit no key has (the top bit), as PyTorch's ks.raw_repr() would print them, and the empty set.
set(DSCOPE_COMPARE_KEYSETS "keyset 0x12800010001" "keyset 0x12800010001 --verbose" "keyset 0x12800010001 --json"
  "keyset 0x8000000000010001" "keyset 0")

# ---- kernel cores of the crash tests

# infinite_redispatch: myops::my_add's AutogradCPU kernel re-enters itself until the stack overflows.
dscope_compare_test(compare_infinite_redispatch_core PROGRAM infinite_redispatch CORE_OF crash_infinite_redispatch
  CMD "dispatch-trace" "dispatch-trace --all" "dispatch-trace --full" "dispatch-trace --json" "dispatch-trace --frames"
      "dispatch-trace --frames --json" "op-table myops::my_add" "op-table myops::my_add --registered" "op-table myops::my_add --computed"
      "op-table myops::my_add --key AutogradCPU" "op-table myops::my_add --key CPU" "op-table myops::my_add --json"
      "op-table --list my_add" "op-table --list myops::" "op-table --missing AutogradCPU"
      ${DSCOPE_COMPARE_KEYSETS} "keyset --tls" "keyset --tls --verbose" "keyset --tls --json"
      "keyset dscope::after_autograd_keyset" ${DSCOPE_COMPARE_BAD_INPUT_CORE})

# The same core cut at half its size: no shared library loaded, the records still readable.
dscope_compare_test(compare_truncated_core PROGRAM infinite_redispatch CORE_OF truncated_infinite_redispatch
  CMD "dispatch-trace" "dispatch-trace --frames" "op-table myops::my_add" "op-table --list my_add" "keyset --tls" ${DSCOPE_COMPARE_BAD_INPUT_CORE})

# multithread: thread 5 overflows in myops::loop while others dispatch.
dscope_compare_test(compare_multithread_core PROGRAM multithread CORE_OF crash_multithread
  CMD "dispatch-trace" "dispatch-trace --all" "dispatch-trace --all --json" "dispatch-trace --thread 1"
      "dispatch-trace --thread 2" "keyset --tls" "keyset --tls --thread 2"
      "op-table myops::loop" "op-table myops::loop --key AutogradCPU" "op-table --list loop"
      ${DSCOPE_COMPARE_BAD_INPUT_CORE})

# dispatch-trace --frames on a core of a program that aborted: both debuggers give the library the
# same stack frames (GDB lists 20 frames down to main, with 3 tail calls it rebuilds, LLDB 17), so
# the text is the same to the stack frame numbers; --max-frames 9 stops after the innermost
# dispatch of missing_kernel, 12 after both.
set(DSCOPE_COMPARE_CORE_FRAMES "dispatch-trace --frames" "dispatch-trace --frames --json"
    "dispatch-trace --frames --max-frames 9" "dispatch-trace --frames --max-frames 12")
# missing_kernel: myops::only_cpu on a Meta tensor: the Meta backend fallback aborts.
dscope_compare_test(compare_missing_kernel_core PROGRAM missing_kernel CORE_OF crash_missing_kernel
  CMD "dispatch-trace" "dispatch-trace --full" "dispatch-trace --json" ${DSCOPE_COMPARE_CORE_FRAMES}
      "op-table myops::only_cpu" "op-table myops::only_cpu --registered" "op-table myops::only_cpu --computed"
      "op-table myops::only_cpu --key Meta" "op-table myops::only_cpu --key PrivateUse1"
      "op-table myops::only_cpu --key AutogradMeta" "op-table --missing Meta" "op-table --missing PrivateUse1"
      "op-table --list only" "keyset --tls" ${DSCOPE_COMPARE_BAD_INPUT_CORE})

# tls_leak: AutogradCPU excluded by hand and never restored; aborts after the wrong dispatch.
dscope_compare_test(compare_tls_leak_core PROGRAM tls_leak CORE_OF crash_tls_leak
  CMD "keyset --tls" "keyset --tls --verbose" "keyset --tls --json" "keyset --tls --explain 0x12800010001"
      "keyset 0x3ff2000000001" "keyset 0x3ff2000000001 --verbose" "dispatch-trace" "dispatch-trace --all"
      ${DSCOPE_COMPARE_CORE_FRAMES}
      "op-table aten::mm" "op-table aten::mm --key AutogradCPU" "op-table aten::mm --key CPU" "op-table --list mm"
      ${DSCOPE_COMPARE_BAD_INPUT_CORE})

# op_catalog: PyTorch 2.11's whole operator list; one operator of each kernel mix (by position
# in the list: see samples/op_catalog.cpp) and the runtime's own aten operators.
dscope_compare_test(compare_op_catalog_core PROGRAM op_catalog CORE_OF crash_op_catalog
  CMD "op-table --list" "op-table --list linear" "op-table aten::linear" "op-table aten::linear --registered"
      "op-table aten::linear --computed" "op-table aten::linear --key Meta" "op-table aten::add.Tensor"
      "op-table aten::add" "op-table aten::randn --key BackendSelect" "op-table --missing Meta"
      "op-table --missing AutogradCPU" "op-table aten::linaer" "dispatch-trace" ${DSCOPE_COMPARE_BAD_INPUT_CORE})

# ---- cores gdb writes (generate-core-file) at a sample's checkpoint: the scenarios with no crash

# autocast_missing: myops::my_mm has no AutocastCPU kernel, so autocast does not apply to it.
dscope_compare_test(compare_autocast_missing_gcore PROGRAM autocast_missing GCORE_AT sample_checkpoint
  CMD "op-table myops::my_mm" "op-table myops::my_mm --key AutocastCPU" "op-table aten::mm --key AutocastCPU"
      "op-table --missing AutocastCPU" "keyset --tls" "keyset --tls --verbose" "dispatch-trace"
      ${DSCOPE_COMPARE_KEYSETS} ${DSCOPE_COMPARE_BAD_INPUT_CORE})

# private_backend: a PrivateUse1 "vdev" with its own kernels for empty, fill_, add and mm.
dscope_compare_test(compare_private_backend_gcore PROGRAM private_backend GCORE_AT sample_checkpoint
  CMD "op-table aten::mm" "op-table aten::mm --key PrivateUse1" "op-table aten::mm --key AutogradPrivateUse1"
      "op-table aten::add.Tensor --key PrivateUse1" "op-table --missing PrivateUse1"
      "dispatch-trace" "keyset --tls"
      ${DSCOPE_COMPARE_BAD_INPUT_CORE})

# basic_dispatch in the CPU mm kernel (aten::mm at AutogradCPU, then CPU), from a core gdb writes.
dscope_compare_test(compare_basic_dispatch_gcore PROGRAM basic_dispatch GCORE_AT mm_cpu
  CMD "dispatch-trace" "dispatch-trace --json" "op-table aten::mm" "keyset --tls" ${DSCOPE_COMPARE_BAD_INPUT_CORE})

# ---- live

# basic_dispatch stopped in the CPU mm kernel by a breakpoint on its function name in each debugger.
# --frames: 8 stack frames, the dispatches in stack frames #2 and #5 (GDB lists them as its frames
# #4 and #11, LLDB as #5 and #12: they list inlined calls differently; the library counts stack
# frames): --max-frames 3 stops after the innermost, 6 after both.
set(DSCOPE_COMPARE_FRAMES "dispatch-trace --frames" "dispatch-trace --frames --max-frames 3"
    "dispatch-trace --frames --max-frames 6")
dscope_compare_test(compare_basic_dispatch_live PROGRAM basic_dispatch LAUNCH BREAK mm_cpu
  CMD "dispatch-trace" "dispatch-trace --full" "dispatch-trace --json" "dispatch-trace --all" ${DSCOPE_COMPARE_FRAMES}
      "op-table aten::mm" "op-table aten::mm --computed" "op-table aten::mm --key CPU" "op-table --list mm"
      "keyset --tls" "keyset --tls --verbose" ${DSCOPE_COMPARE_KEYSETS} ${DSCOPE_COMPARE_BAD_INPUT})

# basic_dispatch stopped by dispatch-break: pending before run, the stop's own report, the chain
# there, the hook's arguments (the key set and the key it was called with).
# After the program has exited there is no process: both say so (GDB must not read the runtime's
# file as if it were memory). Address 0 is in no section of the executable: unreadable in both
# (LLDB reads whole segments of the file, the ELF header there).
dscope_compare_test(compare_after_exit_live PROGRAM basic_dispatch LAUNCH EXITS
  CMD "op-table aten::mm" "dispatch-trace" "keyset --tls" "op-table --list mm" "keyset 0x12800010001"
      "keyset *(long*)0")

# keyset on what a user has at hand (printers_program's main, -O0): a tensor, a pointer or
# reference to one or to its TensorImpl, the key set member, and what is none of these. GDB lets
# `.` reach through a pointer (LLDB: only with clang's '->' fix-it, and no other fix-it).
dscope_compare_test(compare_keyset_expressions_live PROGRAM printers_program LAUNCH BREAK stop_here UP 1
  CMD "keyset x" "keyset &x" "keyset x --verbose" "keyset x.impl_.p_" "keyset *x.impl_.p_" "keyset x.impl_.p_->key_set"
      "keyset ks" "keyset c --json" "keyset undefined" "keyset corrupt_impl" "keyset x.impl_" "keyset probe"
      "keyset (dscope::TensorImpl*)0" "keyset x.impl_.p_.key_set" "keyset (x.impl_.p_).key_set"
      "keyset x.impl_.p_.key_set 0x2")

dscope_compare_test(compare_dispatch_break_live PROGRAM basic_dispatch LAUNCH
  CMD "dispatch-break aten::mm --key Bogus" "dispatch-break ::" "dispatch-break aten::mm --key" "dispatch-break --list x"
      "dispatch-break --delete x" "dispatch-break --key CPU 'aten::mm'" "dispatch-break --list"
      "@run" "dispatch-break --why" "dispatch-break --why --json" "dispatch-trace" "keyset keyset"
      "dispatch-break --list" "dispatch-break aten::relu" "dispatch-break --list" "@silent dispatch-break --delete 2"
      "dispatch-break --delete 7" "dispatch-break --list" "dispatch-break aten::nope" "dispatch-break"
      "dispatch-break aten::mm --key CPU" "dispatch-break --list")

# multithread --no-crash --until-killed: 8 threads dispatching, stopped with SIGSTOP mid-run; gdb,
# then lldb-16 attach to that same process (same threads, same records). --until-killed: the
# program (0.12 s in all) could otherwise exit under load before the SIGSTOP.
dscope_compare_test(compare_multithread_live PROGRAM multithread ATTACH_AFTER "started" ATTACH_COUNT 8 ATTACH_DELAY 0.02
  CMD "dispatch-trace --all" "dispatch-trace" "keyset --tls" "op-table aten::mm --key AutogradCPU"
      ${DSCOPE_COMPARE_BAD_INPUT}
  ARGS --no-crash --until-killed)

# op_catalog waiting in pause(): the whole registry, live.
dscope_compare_test(compare_op_catalog_live PROGRAM op_catalog ATTACH_AFTER "ready"
  CMD "op-table --list linear" "op-table aten::linear" "op-table aten::linear --computed"
      "op-table --missing Meta" "dispatch-trace --all" "keyset --tls")
