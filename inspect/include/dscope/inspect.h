/* libdscope_inspect: the single decoder of DispatchScope runtime state, for every front end
 * (GDB via ctypes, the LLDB plugin, a CLI). It reads a live process or a core only through a
 * dscope_target the front end provides, parses command lines itself, and returns the text
 * (or JSON) to print, so every front end prints identical output.
 *
 * Contract read: docs/DEBUG-INTERFACE.md (dscope_debug_descriptor and what it leads to). */
#ifndef DSCOPE_INSPECT_H
#define DSCOPE_INSPECT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DSCOPE_INSPECT_ABI_VERSION 15

/* A value as the debugger sees it, described without reading through it (evaluate, frame_variable,
 * and the printers' dscope_value_summary): the library alone knows what the runtime's types hold.
 * A reference is described as its referent. */
enum dscope_value_kind {
  DSCOPE_KIND_INTEGER = 0, /* an integer, enum, bool or char, or a pointer to neither an object nor a
                               function: `bits` is the value, `type` its type (an enum's name) */
  DSCOPE_KIND_OBJECT = 1,  /* a struct or class: `type` its name, `address` where it lies (0: not in
                               memory), `bits` its first `size` bytes little endian when size <= 8 */
  DSCOPE_KIND_POINTER = 2, /* a pointer to a struct or class: `bits` the pointer, `type` the pointee's */
  DSCOPE_KIND_OTHER = 3    /* anything else (a float, a function or a pointer to one, an array) */
};
typedef struct dscope_value {
  uint32_t kind;   /* dscope_value_kind */
  uint64_t bits;
  uint64_t address;
  uint64_t size;   /* the type's size in bytes (of the pointee for POINTER) */
  char type[512];  /* the type's name as the debugger spells it, typedefs and cv-qualifiers removed */
  char shown[512]; /* the value's type as the debugger prints it (for "EXPR is a T" messages) */
} dscope_value;

typedef struct dscope_target {
  void* ctx; /* passed back to every callback */
  /* Reads `size` bytes at `addr` into `out`; 0 on success, nonzero if unreadable. Required. */
  int (*read_memory)(void* ctx, uint64_t addr, void* out, uint64_t size);
  /* Writes `size` bytes at `addr` (live processes only; NULL or nonzero for cores). */
  int (*write_memory)(void* ctx, uint64_t addr, const void* data, uint64_t size);
  /* Address of a global symbol of the inferior (dynamic symbols suffice); 0 on success. Required. */
  int (*find_symbol)(void* ctx, const char* name, uint64_t* addr);
  /* The target's module (its program or a shared library) number `index`, counted from 0: the
   * address its file's first byte is mapped at into *start, the file's path NUL-terminated into
   * path. 0 on success, 1 past the last module. The library symbolizes code addresses itself from
   * these files (elfutils). Optional (NULL: code addresses are printed in hex). */
  int (*module_at)(void* ctx, uint64_t index, uint64_t* start, char* path, uint64_t path_size);
  /* Evaluates a debugger expression and describes its value (dscope_value); on failure writes a
   * one-line reason into err. The library decides what the value means (`keyset EXPR`: a key set,
   * a tensor's key set, a number). Optional (NULL: only numbers are accepted). */
  int (*evaluate)(void* ctx, const char* expr, struct dscope_value* value, char* err, uint64_t err_size);
  /* The variable `name` of the debugger's selected frame (with parameter set: only its parameter
   * of that name; never a global), described as evaluate does: 0 on success; 1 when the frame has
   * none; 2 when it cannot be read (the reason into err: optimized out, unreadable); 3 when the
   * frame has no debug information. Optional (NULL: dscope_frame_* answer "not supported"). */
  int (*frame_variable)(void* ctx, const char* name, int parameter, struct dscope_value* value, char* err,
                        uint64_t err_size);
  /* The OS thread id (LWP) of the debugger's thread number `n`; 0 on success. Optional. */
  int (*thread_tid)(void* ctx, int64_t n, int64_t* tid);
  /* LWP of the currently selected thread, or 0 when there is none. */
  int64_t selected_tid;

  /* ---- dispatch-trace --frames: the dispatch chain rebuilt from the native stack (for runtimes
   * built without dispatch records, and builds without debug info). The library asks only what any
   * debugger knows of a stack frame without DWARF, one frame at a time outwards from the innermost,
   * and decides itself what each frame is: it symbolizes the pcs from the module files (module_at)
   * and maps them to the dispatcher's functions and the registry's kernels. Optional: NULL makes
   * --frames answer "not supported by this front end". */
  /* Stack frame `level` of thread `tid`, from 0 (the innermost). Calls inlined into a function
   * share its stack frame and are no frames here (skip GDB's inline and tail-call frames and
   * LLDB's inlined frames). Its pc into *pc (for an outer frame, the return address, as the
   * debugger shows it) and its stack pointer into *sp (for an outer frame, the value at its call:
   * the CFA of the frame inside it). 0 on success; 1 past the last frame the debugger unwinds. */
  int (*stack_frame)(void* ctx, int64_t tid, uint64_t level, uint64_t* pc, uint64_t* sp);
  /* The debugger's own limit on the frames it unwinds (GDB: backtrace limit; LLDB:
   * target.process.thread.max-backtrace-depth), 0 for none: named when the walk ends there. */
  uint64_t frame_cap;
  /* Why the debugger lists no stack frame `level` of thread `tid` (asked when stack_frame
   * answered 1 there): one of dscope_frames_end. Optional (NULL: the walk reached the outermost
   * frame). */
  int (*frame_walk_end)(void* ctx, int64_t tid, uint64_t level);

  /* ---- what the process is made of: for telling corrupt memory and a core opened with another
   * program from what they look like. All optional. */
  /* 1 when the process (live or core) has a thread whose OS id is `tid`, 0 when it has none,
   * anything else when the debugger cannot tell. */
  int (*thread_exists)(void* ctx, int64_t tid);
  /* Where the target maps files from their first byte (the ELF headers of the program and its
   * libraries): at most `max` addresses into starts, their number into *count; 0 on success. A
   * superset does too (the start of every mapping). */
  int (*mapping_starts)(void* ctx, uint64_t* starts, uint64_t max, uint64_t* count);
  /* The GNU build-id, in hex, of the executable file the debugger opened for the target,
   * NUL-terminated into out; 0 on success, nonzero when it knows none. */
  int (*executable_build_id)(void* ctx, char* out, uint64_t out_size);

  /* ---- dispatch-break (dscope_breaks_*) */
  /* 1 when the target is a core file: a breakpoint cannot wait there for the runtime to load. */
  int is_core;
  /* Makes sure the front end's breakpoint on dscope_debug_break_hook exists; called before the
   * library writes entries into the runtime's break filter (a dispatch may stop as soon as they
   * are written). 0 on success. Optional (NULL: the front end places it by itself, e.g. pending
   * in every target it debugs). */
  int (*place_break_hook)(void* ctx);

  /* An id of the target's memory as it is now: the same for two commands only when nothing can
   * have changed it in between (the same core file; a live process stopped at the same stop, with
   * no memory written and no function called). The library then keeps what one command read for
   * the next with the same id (pages, module list, symbol names); 0: keep nothing. */
  uint64_t memory_generation;

  /* ---- pid namespaces: a process in a pid namespace of its own (a container) knows its threads by
   * that namespace's ids, and its memory holds those (our runtime's record blocks, glibc's struct
   * pthread); a debugger, dscope or a core taken outside it knows them by the outer ids. */
  /* The thread pointer of thread `tid` (x86-64: its fs_base register) into *addr; 0 on success.
   * glibc's struct pthread lies there, holding the thread's id as the thread itself sees it: the
   * library maps the two ids with it. Optional (NULL: the ids are taken to be the same). */
  int (*thread_pointer)(void* ctx, int64_t tid, uint64_t* addr);

  /* ---- where the target's files are: a process in a container (another root or mount namespace),
   * or a core written there, names its files (module_at's paths) by its own root's paths. The
   * library reads each module from the first of sysroot + path, /proc/PID/root + path and path
   * whose build-id is the one of the module's image in memory, and says in one line which file is
   * missing or another build. */
  const char* sysroot;         /* the debugger's sysroot (a copy of the process's root); NULL or "": none */
  int64_t pid;                 /* a live process's pid, 0 for a core */
  const char* sysroot_setting; /* how the user gives this front end a sysroot, DIR standing for the
                                  directory (named in that line); NULL: none */
} dscope_target;

enum dscope_frames_end {
  DSCOPE_FRAMES_OUTERMOST = 0,  /* the thread's outermost frame: its start function, or a frame the
                                   unwinder knows has no caller (GDB: no unwind error) */
  DSCOPE_FRAMES_UNREADABLE = 1, /* the unwinder stopped: the stack memory holding the caller of the
                                   last frame cannot be read (a truncated core, unmapped memory) */
  DSCOPE_FRAMES_CORRUPT = 2,    /* the unwinder stopped on a frame that makes no sense (GDB: "previous
                                   frame inner to this frame (corrupt stack?)" and the like) */
  DSCOPE_FRAMES_GONE = 3,       /* the thread or its process no longer exists (it exited or was killed
                                   during the walk) */
  DSCOPE_FRAMES_CAP = 4         /* the debugger's own limit (frame_cap) */
};

/* Runs one user command line, e.g. "keyset 0x12800010001 --verbose", "keyset --tls",
 * "op-table aten::mm --computed", "op-table --list mm", "op-table --missing Meta",
 * "dispatch-trace --all", "dispatch-trace --json": the first word is the command (keyset |
 * op-table | dispatch-trace). Returns a malloc'd NUL-terminated string (free with
 * dscope_inspect_free). On bad input, unreadable or corrupt memory, a missing or foreign runtime,
 * the result is exactly one line starting with "dscope: " and *is_error is set to 1. Never
 * crashes, never loops unbounded. The entry points below answer the same way. */
char* dscope_inspect_run(const dscope_target* target, const char* command_line, int* is_error);

/* The usage line of a user command (keyset, op-table, dispatch-trace, dispatch-break), for help. */
char* dscope_inspect_usage(const char* command, int* is_error);
/* Newline-separated operator names starting with `prefix` (at most `limit`), for completion. */
char* dscope_inspect_complete_ops(const dscope_target* target, const char* prefix, int limit);
/* Newline-separated runtime key names starting with `prefix` (what --key and --missing take), of
 * the runtime the target holds (its key table); DispatchScope's own with no target (NULL) or none
 * readable. */
char* dscope_inspect_complete_keys(const dscope_target* target, const char* prefix);
/* What completes the word being typed on a user command's line: `command` is the command's word,
 * `arguments` the text after it up to the cursor. The library decides by the command's own options
 * what that word is (dscope_completes into *completes): where the operator goes, operator names (at
 * most 200); after --key and --missing, key names (dscope_inspect_complete_keys); after another
 * option that takes a value, nothing; where an expression goes (the operand of a command with
 * DSCOPE_COMMAND_COMPLETES_EXPRESSION, --explain's value), the debugger's own completion. Returns
 * the names as what each adds to the word typed so far (the word itself left out, so a front end
 * that breaks words elsewhere, as GDB does at ':' and '.', appends it to its own word), one a
 * line, each line ending in a newline and empty where the word typed is a name already. Never an
 * error: what it cannot answer (no such command, unreadable memory) completes to nothing. */
enum dscope_completes {
  DSCOPE_COMPLETES_NAMES = 0,      /* the names returned (none: nothing completes the word) */
  DSCOPE_COMPLETES_EXPRESSION = 1  /* the debugger's own expression completion (no names returned) */
};
char* dscope_inspect_complete(const dscope_target* target, const char* command, const char* arguments,
                              int* completes);

void dscope_inspect_free(char* s);

/* The file the library reads a target's module from (dscope_target's sysroot and pid): the module
 * mapped from `path` whose image has GNU build-id `build_id` (hex; NULL or "": any file there), for
 * a front end that opens the module files itself. A malloc'd path (free with dscope_inspect_free);
 * NULL when no place holds it. */
char* dscope_module_file(const char* path, const char* build_id, const char* sysroot, int64_t pid);

/* ---- the dispatch in the debugger's selected frame (GDB's $dispatch_op_is and $dispatch_key),
 * decoded from its variables (frame_variable: `this` or `op`, an operator handle, entry or the
 * break hook's untyped `op`; `ks` or `keyset`, a key set). `frame` is the frame's name, for
 * messages. */
/* 1 when that dispatch's operator is `name` (a full name, or a base name for every overload, as
 * dispatch-break matches), 0 when not; -1 with a malloc'd "dscope: " line in *error otherwise. */
int dscope_frame_op_is(const dscope_target* target, const char* frame, const char* name, char** error);
/* The key that dispatch reads its table at (its key set's highest-priority key), by name. */
char* dscope_frame_key(const dscope_target* target, const char* frame, int* is_error);

/* ---- value printers: one table of the runtime types the debuggers print, for every front end
 * (GDB's pretty-printers, LLDB's summaries and synthetic children register from it). */
typedef struct dscope_value_type {
  const char* type_name;    /* the C++ type as debuggers name it, typedefs stripped; a name ending
                               in '<' stands for every instance of that template */
  const char* summary_type; /* the short name (DispatchKeySet, OperatorEntry) */
  uint32_t word_size;       /* 0: decoded from the object's address; else from the value's own bits,
                               this many bytes (no process needed), and a child of this type is made
                               of them */
  uint32_t flags;           /* DSCOPE_VALUE_* */
} dscope_value_type;
#define DSCOPE_VALUE_EXPANDS 1u  /* it has children an IDE expands */
#define DSCOPE_VALUE_ELEMENTS 2u /* those children are elements ([0], [1], ...), not members */
/* Row `index` of the table (from 0); NULL past the last. Static: never freed. */
const dscope_value_type* dscope_value_type_at(uint64_t index);

/* One child of a summarized value. `type` is the C++ type a front end makes it of: a value type of
 * the table (`word` its bits), "bool" (`word` 0 or 1), a pointer "T*" (`word` the address),
 * "int64[]" (`elements`); NULL: the child is its summary text. */
typedef struct dscope_value_child {
  const char* name;
  const char* summary;
  const char* type;
  uint64_t word;
  const int64_t* elements;
  uint64_t element_count;
} dscope_value_child;
typedef struct dscope_summary {
  const char* text; /* the one-line summary, or the one "dscope: " line when is_error */
  int is_error;
  uint64_t child_count;
  const dscope_value_child* children;
} dscope_summary;
/* The summary of a value of a table type (value->type), decoded from its bits or from the object at
 * its address as the row says; the descriptor (version, layout profile) is checked before any
 * object is read. Never NULL; free with dscope_summary_free. */
dscope_summary* dscope_value_summary(const dscope_target* target, const dscope_value* value);
void dscope_summary_free(dscope_summary* summary);

/* ---- dispatch-break: the library keeps the table of a debugger session's dispatch breakpoints
 * (numbers, operators, keys, pending ones) and writes it into the runtime's break filter; the
 * front end keeps its one native breakpoint on dscope_debug_break_hook. Strings returned as
 * dscope_inspect_run's, errors one "dscope: " line with *is_error set. */
typedef struct dscope_breaks dscope_breaks;
dscope_breaks* dscope_breaks_new(void);
void dscope_breaks_free(dscope_breaks* breaks);
/* The user's `dispatch-break ARGUMENTS` (list, delete, add; armed at once when the runtime is
 * loaded, else kept pending): the text to print. */
char* dscope_breaks_command(dscope_breaks* breaks, const dscope_target* target, const char* arguments, int* is_error);
/* The runtime was loaded, or a thread is about to dispatch for the first time: writes every
 * breakpoint into the runtime's filter, unless this table did so in this process already
 * (dscope_debug_descriptor.instance) or no runtime is loaded yet (they stay pending). "" on
 * success. */
char* dscope_breaks_arm(dscope_breaks* breaks, const dscope_target* target, int* is_error);
/* The breakpoints the table holds (0: the front end needs no breakpoint on the hook). */
int dscope_breaks_count(const dscope_breaks* breaks);
/* A thread stopped at the first instruction of a function (a dispatch-break location): what the
 * library needs of it. System V x86-64: the integer arguments are in rdi, rsi, rdx, rcx, r8, r9,
 * and sp points at the return address (the stack arguments follow it). */
typedef struct dscope_stop_registers {
  int64_t tid; /* the OS thread id (LWP) of the thread that stopped */
  uint64_t pc;
  uint64_t sp;
  uint64_t args[6]; /* rdi, rsi, rdx, rcx, r8, r9 */
} dscope_stop_registers;
/* What a front end does after a stop at a dispatch-break location (dscope_breaks_hit's *action). */
enum dscope_hit_action {
  DSCOPE_HIT_CONTINUE = 0, /* not a dispatch asked for (a trampoline several kernels share ran another
                              kernel): continue, printing nothing */
  DSCOPE_HIT_STOP = 1,     /* a dispatch a breakpoint asks for: stop and print the text */
  DSCOPE_HIT_SYNC_ON_RETURN = 2 /* a registration that changes the kernels of a breakpoint's operator:
                              place a one-time breakpoint at the return address (the word at sp), ask
                              for the locations again when it is hit, and continue each time */
};
/* A stop at one of the code addresses the table needs (dscope_breaks_locations, or the runtime's
 * dscope_debug_break_hook): *action says what to do (dscope_hit_action); the text is what to
 * print when it is DSCOPE_HIT_STOP (the stop line and why the dispatch went to that kernel). */
char* dscope_breaks_hit(dscope_breaks* breaks, const dscope_target* target, const dscope_stop_registers* registers,
                        int* action, int* is_error);
/* dscope_breaks_hit with the registers as a front end reads them: `values` holds the thread's
 * registers named by dscope_stop_register_at, in that order, `count` of them (all of them, else
 * the answer is one "dscope: " line). */
char* dscope_breaks_hit_registers(dscope_breaks* breaks, const dscope_target* target, int64_t tid,
                                  const uint64_t* values, uint64_t count, int* action, int* is_error);
/* The code addresses the table's breakpoints need now in a process that runs real PyTorch, one
 * per line in hex: the kernels' entries and where kernels are registered (the kernels may change
 * there). "" when there are none: no breakpoint, PyTorch not loaded
 * or not initialized yet, or DispatchScope's runtime, whose filter needs only the hook. The front
 * end keeps exactly one native breakpoint on each, all answered by dscope_breaks_hit, adding and
 * removing as the list changes: it asks after each dispatch-break command, when libraries load,
 * at the DSCOPE_POINT_LOCATES points (dscope_break_point_at: where PyTorch's static initializers
 * have registered its kernels), at each stop, and where a registration returns
 * (DSCOPE_HIT_SYNC_ON_RETURN). */
char* dscope_breaks_locations(dscope_breaks* breaks, const dscope_target* target, int* is_error);

/* ---- what a front end needs of the runtimes, the ABI and its user commands, so that it holds none
 * of it: the places it keeps native breakpoints on for dispatch-break, the registers it reads at a
 * stop there, its commands and their help. `front_end` names the debugger ("gdb", "lldb"): the
 * answers differ where the debuggers do. Rows are static (never freed); NULL past the last row and
 * for a front end the library does not know. */

/* Where a dscope_break_point is. */
enum dscope_point_where {
  DSCOPE_POINT_FUNCTION = 0, /* the first instruction of the function `name` (a global symbol), in
                                every module that defines it: placed pending, or as soon as a module
                                defines it, in every process the front end debugs */
  DSCOPE_POINT_LOAD = 1      /* the load of a module whose file name contains `name` (a front end
                                that stops there before the module's static initializers run) */
};
/* What a front end does at a dscope_break_point (DSCOPE_POINT_* flags). Every stop there but a
 * HITS one continues the program, printing only what the library answers. */
#define DSCOPE_POINT_HITS 1u     /* dscope_breaks_hit(_registers) answers the stop (the runtime's hook) */
#define DSCOPE_POINT_ARMS 2u     /* dscope_breaks_arm (once per process: the library keeps which) */
#define DSCOPE_POINT_LOCATES 4u  /* dscope_breaks_locations again, reconciling the breakpoints on its
                                    addresses (after ARMS when both) */
typedef struct dscope_break_point {
  uint32_t where; /* dscope_point_where */
  const char* name;
  uint32_t does;  /* DSCOPE_POINT_* */
} dscope_break_point;
/* Row `index` (from 0) of the places `front_end` keeps a native breakpoint on besides
 * dscope_breaks_locations' addresses: needed while the table holds a breakpoint
 * (dscope_breaks_count); the HITS one also when the library asks (place_break_hook). */
const dscope_break_point* dscope_break_point_at(const char* front_end, uint64_t index);

/* The registers a front end reads at a stop that dscope_breaks_hit_registers answers, by the names
 * both GDB ($NAME) and LLDB (SBFrame::FindRegister) know them by: name `index` (from 0), NULL past
 * the last. Their order is that of dscope_stop_registers' words after tid. */
const char* dscope_stop_register_at(uint64_t index);
/* The register holding a thread's thread pointer (dscope_target's thread_pointer). */
const char* dscope_thread_pointer_register(void);

/* One user command of a front end. */
typedef struct dscope_command_help {
  const char* name;    /* the command's word */
  const char* summary; /* one line, the first of its help */
  const char* details; /* the rest of its help, after its usage (dscope_inspect_usage): paragraphs of
                          one line each, separated by an empty line, for the front end to wrap */
  uint32_t flags;      /* DSCOPE_COMMAND_* */
} dscope_command_help;
#define DSCOPE_COMMAND_BREAKS 1u               /* runs through dscope_breaks_command (with the word
                                                  removed), not dscope_inspect_run */
#define DSCOPE_COMMAND_COMPLETES_OPERATOR 2u   /* its operand completes to operator names
                                                  (dscope_inspect_complete_ops) */
#define DSCOPE_COMMAND_COMPLETES_EXPRESSION 4u /* its operand is an expression of the debugger's */
/* Row `index` (from 0) of `front_end`'s user commands. */
const dscope_command_help* dscope_command_at(const char* front_end, uint64_t index);

/* The lines a front end prints itself, without asking the library for an answer. */
enum dscope_message {
  DSCOPE_MESSAGE_PROCESS_RUNNING = 0, /* a user command while the process runs (non-stop, async) */
  DSCOPE_MESSAGE_INTERRUPTED = 1      /* a user command that Ctrl-C ended */
};
/* Message `which` (dscope_message): one "dscope: " line without its newline; NULL for another
 * number. Static: never freed. */
const char* dscope_inspect_message(int which);

#ifdef __cplusplus
}
#endif

#endif /* DSCOPE_INSPECT_H */
