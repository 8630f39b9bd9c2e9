# gdb_loading tests (see tests/CMakeLists.txt for dscope_gdb_test): GDB support loaded the way a
# user gets it. Driven by gdb_loading.py; expected text comes from each scenario.
set(LOADING_WORK ${CMAKE_CURRENT_BINARY_DIR}/gdb_loading)
set(LOADING ${Python3_EXECUTABLE} ${E2E}/gdb_loading.py)
function(dscope_loading_test name)
  cmake_parse_arguments(T "" "SETUP" "COMMAND;REQUIRES" ${ARGN})
  add_test(NAME ${name} COMMAND ${T_COMMAND})
  set_tests_properties(${name} PROPERTIES LABELS "gdb" SKIP_RETURN_CODE 77)
  if(T_SETUP)
    set_tests_properties(${name} PROPERTIES FIXTURES_SETUP ${T_SETUP})
  endif()
  if(T_REQUIRES)
    set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED "${T_REQUIRES}")
  endif()
endfunction()

# The install: prefix with the package, libdscope_inspect and the objfile auto-load script, and
# a stripped runtime copy (keeps .debug_gdb_scripts) alone in a directory.
dscope_loading_test(gdb_loading_install SETUP gdb_loading_prefix
  COMMAND ${LOADING} install --build ${PROJECT_BINARY_DIR} --work ${LOADING_WORK})

# (a) Auto-load only, from the installed prefix (the sample runs the installed runtime: it uses
# RUNPATH, so LD_LIBRARY_PATH wins): the objfile script under share/gdb/auto-load, then the
# .debug_gdb_scripts entry alone. keyset decodes a tensor's key set: CPU + its autograd/autocast keys.
dscope_loading_test(gdb_loading_autoload_dir REQUIRES gdb_loading_prefix
  COMMAND ${LOADING} run --work ${LOADING_WORK} --env LD_LIBRARY_PATH=@WORK@/prefix/lib
    --iex "add-auto-load-scripts-directory @WORK@/prefix/share/gdb/auto-load"
    --cmd "break sample_checkpoint" --cmd "run" --cmd "info sharedlibrary dscope_runtime"
    --cmd "info auto-load python-scripts" --cmd "keyset 0x12800010001" --cmd "kill"
    --expect "@WORK@/prefix/lib/libdscope_runtime.so"
    --expect "libdscope_runtime.so.${PROJECT_VERSION}-gdb.py"
    --expect "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
    --reject "GDB support not loaded"
    -- $<TARGET_FILE:tls_leak>)
dscope_loading_test(gdb_loading_debug_gdb_scripts REQUIRES gdb_loading_prefix
  COMMAND ${LOADING} run --work ${LOADING_WORK} --env LD_LIBRARY_PATH=@WORK@/prefix/lib
    --cmd "break sample_checkpoint" --cmd "run" --cmd "info auto-load python-scripts"
    --cmd "keyset 0x12800010001" --cmd "kill"
    --expect "dscope-gdb" --expect "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
    --reject "GDB support not loaded"
    -- $<TARGET_FILE:tls_leak>)
# Loaded three ways in one session (build-tree script, objfile script, section): one registration.
dscope_loading_test(gdb_loading_twice REQUIRES gdb_loading_prefix
  COMMAND ${LOADING} run --work ${LOADING_WORK} --env LD_LIBRARY_PATH=@WORK@/prefix/lib
    --iex "add-auto-load-scripts-directory @WORK@/prefix/share/gdb/auto-load"
    --gdb-script ${GDB_SCRIPT}
    --cmd "source ${GDB_SCRIPT}" --cmd "break sample_checkpoint" --cmd "run"
    --cmd "python print('dscope loaded:', __import__('dscope_gdb').loaded(), __import__('dscope_gdb').load('x'))"
    --cmd "keyset 0x12800010001" --cmd "kill"
    --expect "dscope loaded: True False" --expect "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
    -- $<TARGET_FILE:tls_leak>)

# (b) A kernel core of the infinite redispatch made with the stripped runtime (LD_LIBRARY_PATH):
# its section still runs (and says in one line that no package is beside the copy), and the
# records, read through .dynsym alone, still name the cycle: my_add's autograd kernel calling
# my_add again at AutogradCPU. ("(*)": GDB found no debug info for the copy.)
dscope_loading_test(gdb_loading_stripped_core_make SETUP gdb_loading_stripped_core REQUIRES gdb_loading_prefix
  COMMAND ${LOADING} core --work ${LOADING_WORK} --name stripped_overflow --env LD_LIBRARY_PATH=@WORK@/stripped
    -- $<TARGET_FILE:infinite_redispatch>)
dscope_loading_test(gdb_loading_stripped_core REQUIRES "gdb_loading_prefix;gdb_loading_stripped_core"
  COMMAND ${LOADING} run --work ${LOADING_WORK} --core-name stripped_overflow --gdb-script ${GDB_SCRIPT}
    --cmd "info sharedlibrary dscope_runtime" --cmd "dispatch-trace"
    --expect "@WORK@/stripped/libdscope_runtime.so" --expect "(*)"
    --expect "dscope: GDB support not loaded"
    --expect "[call] op=[myops::my_add], key=[AutogradCPU] ... repeated"
    -- $<TARGET_FILE:infinite_redispatch>)

# (c) A gcore core of tls_leak stopped at its checkpoint, after the leaked exclude of AutogradCPU:
# no dispatch in progress there, and the thread's exclude set still holds AutogradCPU.
dscope_loading_test(gdb_loading_gcore_make SETUP gdb_loading_gcore
  COMMAND ${LOADING} gcore --work ${LOADING_WORK}_gcore --name tls_leak --break sample_checkpoint
    -- $<TARGET_FILE:tls_leak>)
dscope_loading_test(gdb_loading_gcore REQUIRES gdb_loading_gcore
  COMMAND ${LOADING} run --work ${LOADING_WORK}_gcore --core-name tls_leak --gdb-script ${GDB_SCRIPT}
    --cmd "dispatch-trace" --cmd "keyset --tls" --cmd "dispatch-trace --frames"
    --expect "no dispatch in progress" --expect "excluded: DispatchKeySet(AutogradCPU, AutocastCPU"
    --expect "excluded beyond the default: AutogradCPU" --expect "no dispatch frame on the stack"
    -- $<TARGET_FILE:tls_leak>)

# (d) A program without the runtime: one "dscope:" line per command, before and after it runs.
dscope_loading_test(gdb_loading_no_runtime
  COMMAND ${LOADING} run --work ${LOADING_WORK} --gdb-script ${GDB_SCRIPT}
    --cmd "dispatch-trace" --cmd "dispatch-trace --frames" --cmd "starti" --cmd "dispatch-trace"
    --cmd "dispatch-trace --frames" --cmd "kill"
    --expect "dscope: " --expect "dscope: no process or core file"
    --expect "dscope: no DispatchScope runtime in this process"
    -- /bin/true)

# (e) dispatch-trace --frames at a live stop inside a nested dispatch: basic_dispatch's forward
# pass stopped in the CPU mm kernel. at::mm enters at AutogradCPU ([call]) and the autograd kernel
# redispatches below autograd to CPU ([redispatch]).
dscope_loading_test(gdb_loading_frames_live
  COMMAND ${LOADING} run --work ${LOADING_WORK} --gdb-script ${GDB_SCRIPT}
    --cmd "break mm_cpu" --cmd "run" --cmd "dispatch-trace --frames" --cmd "kill"
    --expect "from the native stack (" --expect "frames walked)"
    --expect "#0 [call] op=[aten::mm], key=[AutogradCPU]  (stack frame #"
    --expect "#1 [redispatch] op=[aten::mm], key=[CPU]  (stack frame #"
    -- $<TARGET_FILE:basic_dispatch>)
# --frames on the overflow core: the walk stops at its bound, folds the my_add cycle and names the
# kernel that re-enters (the same diagnosis as the records give).
dscope_loading_test(gdb_loading_frames_overflow_core REQUIRES crash_infinite_redispatch
  COMMAND ${LOADING} run --work ${DSCOPE_CORES} --core-name crash_infinite_redispatch --gdb-script ${GDB_SCRIPT}
    --cmd "dispatch-trace --frames"
    --expect "stopped at the 20 000-frame bound" --expect "[call] op=[myops::my_add], key=[AutogradCPU] ... repeated"
    --expect "my_add_autograd" --expect "ks & after_autograd_keyset"
    -- $<TARGET_FILE:infinite_redispatch>)

# cuda-gdb 13 embeds Python 3.12: what GDB loads (the front end, the printers, the loaders) must
# compile there without a warning (3.12 made invalid escape sequences a SyntaxWarning, printed at
# every load). Where no Python 3.12 is installed (here: pyenv's), the test is not added.
file(GLOB DSCOPE_PYTHON312 /usr/bin/python3.12 $ENV{HOME}/.pyenv/versions/3.12*/bin/python3.12)
if(DSCOPE_PYTHON312)
  list(GET DSCOPE_PYTHON312 0 DSCOPE_PYTHON312)
  file(GLOB DSCOPE_GDB_PYTHON ${PROJECT_SOURCE_DIR}/gdb/dscope_gdb/*.py ${PROJECT_SOURCE_DIR}/gdb/*.py.in
       ${PROJECT_SOURCE_DIR}/pretty_printers/dscope_printers/*.py)
  add_test(NAME gdb_front_end_compiles_in_python312 COMMAND ${DSCOPE_PYTHON312} -W error -c
    "import sys\nfor f in sys.argv[1:]:\n    with open(f) as src: compile(src.read(), f, 'exec')\nprint(len(sys.argv) - 1, 'files compile in', sys.version.split()[0])"
    ${DSCOPE_GDB_PYTHON})
  set_tests_properties(gdb_front_end_compiles_in_python312 PROPERTIES LABELS gdb
    PASS_REGULAR_EXPRESSION "^[1-9][0-9]* files compile in 3\\.12")
endif()
