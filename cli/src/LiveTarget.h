// A running process presented as the dscope_target the inspect library reads, read-only and
// without a debugger: every thread stopped with ptrace for as long as the target lives, modules and
// threads from libdwfl's view of /proc, memory read from /proc/PID/mem. Nothing is written into the
// process and no function of it is called.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "DwflTarget.h"

namespace dscope::cli {

// Every thread of a process stopped (PTRACE_SEIZE, PTRACE_INTERRUPT) while this object lives, and
// let go as it was when it ends (a signal that arrived meanwhile is delivered then; a process that
// was stopped stays stopped). A base of LiveTarget ahead of DwflTarget: libdwfl reads the stopped
// threads' registers, so the threads are let go after libdwfl ends.
class StoppedProcess {
 protected:
  explicit StoppedProcess(pid_t pid);
  ~StoppedProcess();
  StoppedProcess(const StoppedProcess&) = delete;
  StoppedProcess& operator=(const StoppedProcess&) = delete;

  // A stopped thread and its registers, read once when it stopped.
  struct Thread {
    pid_t tid;
    int signal;  // to deliver when it is let go
    user_regs_struct registers;
  };
  // The stopped threads: the main thread (tid == pid) first, then the others in /proc's order.
  const std::vector<Thread>& stopped() const { return stopped_; }
  // Whether the process has exited (or been killed) since its threads were stopped: a stopped
  // thread ends only with its whole process (exit_group, SIGKILL).
  bool exited() const;

  pid_t pid_;
  int memory_fd_ = -1;  // /proc/PID/mem

 private:
  // Seizes `tid` and waits for it to stop: false when it exited meanwhile.
  bool stop(pid_t tid);
  // Lets every stopped thread go.
  void letGo();

  std::vector<Thread> stopped_;
};

class LiveTarget : private StoppedProcess, public DwflTarget {
 public:
  // Stops process `pid` and opens it. Throws std::runtime_error with a one-line reason (no such
  // process, permission denied, not x86-64, already traced); its threads are let go then too.
  explicit LiveTarget(pid_t pid);

  // "process PID exited while it was read" once it has: what was read may be half of it.
  std::optional<std::string> lost() const override;

 private:
  // Reports the modules and threads to libdwfl and fills in the target.
  void open();
  // libdwfl's unwinder over the stopped threads, from the registers read when each stopped and the
  // memory read(): libdwfl's own (dwfl_linux_proc_attach) attaches to the threads again, and aborts
  // on a process that exits meanwhile.
  void attachThreads();
  bool read(uint64_t addr, void* out, uint64_t size) const override;
};

}  // namespace dscope::cli
