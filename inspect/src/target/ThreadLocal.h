// Thread-local variables of a target read without libthread_db and without the debugger's help:
// the walk libthread_db makes, done read-only over read_memory. glibc describes the layouts it
// needs in its exported `_thread_db_*` descriptors (libc.so.6 .dynsym), so nothing of glibc is
// hard-coded here beyond the public ABI of r_debug and link_map (<link.h>).
//   thread pointer: the struct pthread whose tid is the thread's, on _rtld_global's thread lists
//                   (_dl_stack_user holds the initial thread and user stacks, _dl_stack_used the rest)
//   DTV:            the thread pointer's dtv (tcbhead_t), indexed by the module's l_tls_modid
//   variable:       the module's TLS block (the DTV entry) + the symbol's value (STT_TLS st_value)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "target/Remote.h"

namespace dscope::inspect {

// Thread ids inside and outside a pid namespace. A process in a pid namespace of its own (a
// container) knows its threads by that namespace's ids, and its memory holds those (our runtime's
// record blocks, glibc's thread lists); the debugger, dscope or a core taken outside the namespace
// (the target's threads) knows them by the outer ids. glibc writes each thread's id as the thread
// itself sees it into its struct pthread, at the thread's thread pointer: the one map between the
// two, for every front end, made from what the target tells (its threads, their thread pointers,
// else their stack pointers).
class ThreadIds {
 public:
  explicit ThreadIds(const Remote& mem) : mem_(mem) {}
  // The id the process knows the target's thread `tid` by (tid itself when the target cannot tell).
  int64_t ownId(int64_t tid) const;
  // The target's tid of the thread the process knows as `own`; nullopt when the process has no such
  // thread, or when the target cannot tell (threadExists: nullopt).
  std::optional<int64_t> targetTid(int64_t own) const;
  // Whether the process has a thread it knows as `own`; nullopt when the target cannot tell.
  std::optional<bool> ownIdExists(int64_t own) const;
  // How a thread is named: "4242 (tid 5 in its pid namespace)" where the process knows the
  // target's thread 4242 as 5, "4242" where both ids agree.
  std::string shown(int64_t tid) const;
  // The target's threads (their tids), each OS thread once, in the target's order: what a command
  // that reads every thread walks. GDB on a core of a process in a pid namespace lists the threads
  // libthread_db finds a second time, under their namespace ids and without registers, beside the
  // core's: those are left out. Empty when the front end numbers no threads.
  std::vector<int64_t> threads() const;
  // Threads as the process records them elsewhere: own id by pthread_t (a Python thread state's
  // native_thread_id by its thread_id). glibc's pthread_t is the thread's struct pthread, on x86-64
  // its thread pointer; where the struct pthread there holds no id, these tell it. GDB's gcore of a
  // glibc 2.42+ process writes zeros for every stack block with guard pages (MADV_GUARD_INSTALL, smaps
  // "gu": the block's first read fails, and gcore leaves the rest of that segment unwritten), and a
  // thread's struct pthread lies at the top of its block. Added before the map is asked; answers
  // given earlier are not revised. A pthread_t given two own ids tells nothing.
  void addHandles(const std::map<uint64_t, int64_t>& own_by_handle) const;

 private:
  int64_t findOwnId(int64_t tid) const;
  // Whether the target's ids are the process's own. A process's threads share one pid namespace,
  // so the selected thread tells for all, and outside a namespace no other thread's registers are
  // read (GDB fetches a core thread's registers, and warns about them, on the first switch to it);
  // only when the selected thread's own id is not known is another thread asked.
  bool sameIds() const;
  // The target's thread numbers' tids, 1 up (a debugger's numbers have gaps where threads ended:
  // the list ends after kMaxGap misses), asked once.
  const std::vector<int64_t>& numbered() const;
  // The thread pointer the target tells for thread `tid`, asked once; nullopt when it tells none.
  std::optional<uint64_t> pointerOf(int64_t tid) const;
  // The id glibc's struct pthread at thread `tid`'s thread pointer holds, else the one addHandles
  // gave that pointer; nullopt when the target tells no thread pointer (LLDB 16) or neither tells.
  std::optional<int64_t> ownIdByThreadPointer(int64_t tid) const;
  // The target's threads by their own ids, those whose own id could be read (complete_: all).
  const std::map<int64_t, int64_t>& byOwnId() const;
  // byOwnId for a target that tells no thread pointers (LLDB 16): from the threads' stack
  // pointers and where glibc keeps their struct pthread (its lists, and addHandles').
  void matchByStack() const;

  const Remote& mem_;
  mutable std::map<int64_t, int64_t> own_ids_;                   // ownId's answers
  mutable std::map<int64_t, std::optional<uint64_t>> pointers_;  // pointerOf's answers
  mutable std::map<int64_t, std::optional<int64_t>> by_pointer_;  // glibc's id at each thread's pointer
  mutable std::map<uint64_t, int64_t> handles_;                  // addHandles': own id by pthread_t (0: two)
  mutable std::optional<std::vector<int64_t>> numbered_;
  mutable std::optional<std::map<int64_t, int64_t>> by_own_;
  mutable bool complete_ = false;
  mutable std::optional<bool> same_ids_;
};

// The address of the TLS symbol `symbol` of the module (its file, mapped at its start) in thread `tid`, or
// nullopt when that thread has not allocated the module's TLS block yet (dynamic TLS is allocated
// on first use: the variable still holds its initial value, zero). InspectError (one line) when
// the walk cannot be made.
std::optional<uint64_t> threadLocalAddress(const Remote& mem, int64_t tid, const ModuleMapping& module,
                                           const std::string& symbol);

// The start of the module's TLS block in thread `tid` (where its PT_TLS image is copied: a
// variable's st_value is its offset there), or nullopt when the thread has not allocated it yet;
// InspectError as threadLocalAddress. For thread_locals a module does not export, at offsets a
// layout profile states.
std::optional<uint64_t> threadLocalBlock(const Remote& mem, int64_t tid, const ModuleMapping& module);

// The value (st_value) of a symbol in an ELF file's .dynsym, or nullopt.
std::optional<uint64_t> dynamicSymbolValue(const std::string& path, const std::string& name);

}  // namespace dscope::inspect
