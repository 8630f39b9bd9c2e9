#include "LiveTarget.h"

#include "Refusal.h"

#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

namespace dscope::cli {

namespace {

constexpr int kMaxPasses = 64;                            // over /proc/PID/task while threads keep starting
constexpr auto kStopTimeout = std::chrono::seconds(10);  // a thread in uninterruptible sleep may not stop

std::string procPath(pid_t pid, const std::string& what) { return "/proc/" + std::to_string(pid) + "/" + what; }

std::string fileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The value of a "Name:\tvalue" line of a /proc status file (/proc/PID/status), "" when absent.
std::string statusField(const std::string& status, const std::string& name) {
  std::ifstream in(status);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + ":", 0) == 0) {
      const size_t value = line.find_first_not_of(" \t", name.size() + 1);
      return value == std::string::npos ? "" : line.substr(value);
    }
  return "";
}

constexpr int kEndingChecks = 40;                             // of a task on its way out, every 5 ms
constexpr auto kEndingCheckEvery = std::chrono::milliseconds(5);

// Whether task `tid` of process `pid` is ending: gone, a zombie or dead within 200 ms. Only asked
// of a denial to root, which the kernel gives a task on its way out (its memory let go, its exit
// state set) and, but for a tracer or a locked-down kernel, nothing else.
bool taskEnding(pid_t pid, pid_t tid) {
  if (::geteuid() != 0) return false;
  for (int i = 0; i < kEndingChecks; ++i) {
    const std::string state = statusField(procPath(pid, "task/" + std::to_string(tid) + "/status"), "State");
    if (state.empty() || state[0] == 'Z' || state[0] == 'X') return true;
    std::this_thread::sleep_for(kEndingCheckEvery);
  }
  return false;
}

[[noreturn]] void permissionDenied(pid_t pid) {
  std::string scope = fileText("/proc/sys/kernel/yama/ptrace_scope");
  scope.erase(std::remove(scope.begin(), scope.end(), '\n'), scope.end());
  refuse("cannot read process " + std::to_string(pid) +
         ": permission denied (ptrace needs dscope to run as the process's user" +
         (scope.empty() ? "" : " with kernel.yama.ptrace_scope 0 (it is " + scope + ")") + ", or as root)");
}

// Refuses process `pid` when its thread `tid` is traced already (a debugger, or another dscope):
// ptrace allows one tracer.
void refuseIfTraced(pid_t pid, pid_t tid) {
  const std::string tracer = statusField(procPath(pid, "task/" + std::to_string(tid) + "/status"), "TracerPid");
  if (tracer.empty() || tracer == "0") return;
  std::string name = fileText("/proc/" + tracer + "/comm");
  name.erase(std::remove(name.begin(), name.end(), '\n'), name.end());
  refuse("process " + std::to_string(pid) + " is already traced by process " + tracer + " (" +
         (name.empty() ? "a debugger?" : name) + "): detach it first, or wait until it is done");
}

// Refuses a process that cannot be read at all: none, not this user's, not x86-64, traced.
void checkReadable(pid_t pid) {
  if (pid <= 0 || (::kill(pid, 0) != 0 && errno == ESRCH)) refuse("no process with pid " + std::to_string(pid));
  if (pid == ::getpid()) refuse("process " + std::to_string(pid) + " is dscope itself");
  const int fd = ::open(procPath(pid, "exe").c_str(), O_RDONLY | O_CLOEXEC);
  const int open_error = errno;
  if (fd < 0 && (open_error == EACCES || open_error == EPERM)) {
    if (taskEnding(pid, pid)) refuse("process " + std::to_string(pid) + " has exited");
    permissionDenied(pid);
  }
  // A process on its way out loses its program before it is a zombie; a kernel thread (a child of
  // kthreadd, pid 2) never has one.
  const bool kernel_thread = pid == 2 || statusField(procPath(pid, "status"), "PPid") == "2";
  if (fd < 0 && (::kill(pid, 0) != 0 || statusField(procPath(pid, "status"), "State").rfind("Z", 0) == 0 || !kernel_thread))
    refuse("process " + std::to_string(pid) + " has exited");
  if (fd < 0)
    refuse("process " + std::to_string(pid) + " has no program to read (" + std::strerror(open_error) +
           "; a kernel thread)");
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  GElf_Ehdr ehdr;
  const int machine = elf && gelf_getehdr(elf, &ehdr) ? ehdr.e_machine : EM_NONE;
  if (elf) elf_end(elf);
  ::close(fd);
  if (machine != EM_X86_64) refuse("process " + std::to_string(pid) + " is not an x86-64 program");
  const std::string group = statusField(procPath(pid, "status"), "Tgid");
  if (!group.empty() && group != std::to_string(pid))
    refuse(std::to_string(pid) + " is a thread of process " + group + ": read the process (dscope pid " + group + ")");
  refuseIfTraced(pid, pid);
}

// Where the loader mapped an ELF image: the start of each /proc/PID/maps line that maps a file from
// its offset 0 (an image's first segment holds its ELF header). libdwfl reports every run of a
// file's lines as a module, also a reader's own mmap of a library's debug sections (libbacktrace's,
// from offset 0x89000, below the library): that module's symbols would be placed at the wrong
// addresses, and GDB, which follows the link map, does not see it.
std::string exitedWhileRead(pid_t pid) { return "process " + std::to_string(pid) + " exited while it was read"; }

std::set<uint64_t> imageStarts(pid_t pid) {
  std::set<uint64_t> starts;
  std::ifstream in(procPath(pid, "maps"));
  for (std::string line; std::getline(in, line);) {
    uint64_t start = 0, end = 0, offset = 0;
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &start, &end, &offset, &path_at) >= 3 &&
        offset == 0 && path_at > 0 && line.compare(static_cast<size_t>(path_at), 1, "/") == 0)
      starts.insert(start);
  }
  return starts;
}

// The threads in /proc/PID/task, the main thread first.
std::vector<pid_t> tasks(pid_t pid) {
  std::vector<pid_t> tids;
  if (DIR* dir = ::opendir(procPath(pid, "task").c_str())) {
    while (const dirent* e = ::readdir(dir))
      if (e->d_name[0] != '.') tids.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
    ::closedir(dir);
  }
  std::stable_partition(tids.begin(), tids.end(), [pid](pid_t tid) { return tid == pid; });
  return tids;
}

}  // namespace

StoppedProcess::StoppedProcess(pid_t pid) : pid_(pid) {
  checkReadable(pid);
  try {
    // Threads may start while the others stop: list again until a pass finds no new one.
    bool found_new = true;
    for (int pass = 0; found_new; ++pass) {
      if (pass == kMaxPasses)
        refuse("process " + std::to_string(pid) + " keeps starting threads: it cannot be stopped to be read");
      found_new = false;
      for (pid_t tid : tasks(pid)) {
        auto known = [tid](const Thread& t) { return t.tid == tid; };
        if (std::find_if(stopped_.begin(), stopped_.end(), known) == stopped_.end()) found_new = stop(tid) || found_new;
      }
    }
    if (stopped_.empty()) refuse("process " + std::to_string(pid) + " has exited");
    memory_fd_ = ::open(procPath(pid, "mem").c_str(), O_RDONLY | O_CLOEXEC);
    if (memory_fd_ < 0) refuse("cannot read the memory of process " + std::to_string(pid) + ": " + std::strerror(errno));
  } catch (const std::runtime_error&) {
    const bool gone = exited();
    letGo();
    if (gone) refuse(exitedWhileRead(pid));
    throw;
  } catch (...) {
    letGo();
    throw;
  }
}

StoppedProcess::~StoppedProcess() { letGo(); }

void StoppedProcess::letGo() {
  if (memory_fd_ >= 0) ::close(memory_fd_);
  memory_fd_ = -1;
  for (const Thread& t : stopped_)
    ::ptrace(PTRACE_DETACH, t.tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(t.signal)));
  stopped_.clear();
}

bool StoppedProcess::exited() const {
  for (const Thread& t : stopped_) {
    const std::string stat = fileText(procPath(pid_, "task/" + std::to_string(t.tid) + "/stat"));
    const size_t name_end = stat.rfind(") ");
    // Gone, a zombie (Z) or dead (X): its process has ended.
    if (name_end == std::string::npos || stat.size() < name_end + 3 || std::strchr("ZXx", stat[name_end + 2])) return true;
  }
  return false;
}

bool StoppedProcess::stop(pid_t tid) {
  if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
    if (errno == ESRCH) return false;  // it exited
    if (errno == EPERM) {
      refuseIfTraced(pid_, tid);  // another tracer came first (checkReadable saw none)
      if (taskEnding(pid_, tid)) return false;  // it exited, as for ESRCH
      permissionDenied(pid_);
    }
    refuse("cannot stop thread " + std::to_string(tid) + " of process " + std::to_string(pid_) + ": " + std::strerror(errno));
  }
  if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
    ::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
    return false;
  }
  const auto deadline = std::chrono::steady_clock::now() + kStopTimeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(tid, &status, __WALL | WNOHANG);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 || (r == tid && (WIFEXITED(status) || WIFSIGNALED(status)))) return false;  // it exited
    if (r == tid && WIFSTOPPED(status)) {
      // PTRACE_EVENT_STOP: the interrupt (or the group stop of a stopped process); anything else
      // is a signal that reached the thread first, held back until the thread is let go.
      Thread t{tid, (status >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(status), {}};
      const bool registers = ::ptrace(PTRACE_GETREGS, tid, nullptr, &t.registers) == 0;
      stopped_.push_back(t);
      return registers;  // none: the process is being killed (exited() tells)
    }
    if (std::chrono::steady_clock::now() > deadline) {
      stopped_.push_back({tid, 0, {}});  // let go with the others
      refuse("thread " + std::to_string(tid) + " of process " + std::to_string(pid_) +
             " does not stop (in uninterruptible sleep?): it cannot be read");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

LiveTarget::LiveTarget(pid_t pid) : StoppedProcess(pid) {
  try {
    open();
  } catch (const std::runtime_error&) {
    if (exited()) refuse(exitedWhileRead(pid));  // what failed first, failed because of that
    throw;
  }
}

void LiveTarget::open() {
  const pid_t pid = pid_;
  const std::string process = "process " + std::to_string(pid);
  // A process in a container names its files by its own root's paths: they are under /proc/PID/root.
  useFileRoots("", pid);
  target_.pid = pid;
  Dwfl* dwfl = dwfl_begin(&kProcessCallbacks);
  if (!dwfl) refuse("elfutils cannot start: " + std::string(dwfl_errmsg(-1)));
  adopt(dwfl);
  dwfl_report_begin(dwfl_);
  if (int rc = dwfl_linux_proc_report(dwfl_, pid); rc != 0)
    refuse("cannot read the modules of " + process + ": " + (rc > 0 ? std::strerror(rc) : dwfl_errmsg(-1)));
  dwfl_report_end(dwfl_, nullptr, nullptr);
  attachThreads();
  listModules();
  // /proc/PID/maps names the file of every module: each loaded image is read from its file.
  const std::string auxv = fileText(procPath(pid, "auxv"));
  const Module* program = reportedModuleAt(programHeadersAddress(auxv.data(), auxv.size()));
  const std::set<uint64_t> images = imageStarts(pid);
  std::vector<Module> used;
  for (const Module& m : reportedModules())
    if (!m.file.empty() && images.count(m.start)) used.push_back(m);
  useModules(std::move(used), program && !program->file.empty() ? fileBuildId(program->file).value_or("") : "", true);
  std::vector<int64_t> tids;
  std::map<int64_t, uint64_t> pointers;
  for (const Thread& t : stopped()) {
    tids.push_back(t.tid);
    pointers.emplace(t.tid, t.registers.fs_base);
  }
  std::stable_partition(tids.begin(), tids.end(), [pid](int64_t tid) { return tid == pid; });
  useThreads(std::move(tids));
  useThreadPointers(std::move(pointers));
  target_.is_core = 0;
  target_.memory_generation = 1;  // one stop: nothing changes the memory while this target lives
}

std::optional<std::string> LiveTarget::lost() const {
  if (exited()) return exitedWhileRead(pid_);
  return std::nullopt;
}

void LiveTarget::attachThreads() {
  static const Dwfl_Thread_Callbacks kThreads = {
      .next_thread = [](Dwfl*, void* arg, void** thread) -> pid_t {
        const auto& threads = static_cast<LiveTarget*>(arg)->stopped();
        auto next = *thread ? static_cast<const Thread*>(*thread) + 1 : threads.data();
        if (next == threads.data() + threads.size()) return 0;
        *thread = const_cast<Thread*>(next);
        return next->tid;
      },
      .get_thread = nullptr,
      .memory_read = [](Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) -> bool {
        return static_cast<LiveTarget*>(arg)->read(addr, result, sizeof *result);
      },
      .set_initial_registers = [](Dwfl_Thread* thread, void* arg) -> bool {
        const user_regs_struct& r = static_cast<const Thread*>(arg)->registers;
        // DWARF's order: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, rip.
        const Dwarf_Word dwarf[17] = {r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi, r.rbp, r.rsp, r.r8,
                                      r.r9,  r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, r.rip};
        return dwfl_thread_state_registers(thread, 0, 17, dwarf);
      },
      .detach = nullptr,
      .thread_detach = nullptr,
  };
  if (!dwfl_attach_state(dwfl_, nullptr, pid_, &kThreads, this))
    refuse("cannot read the threads of process " + std::to_string(pid_) + ": " + dwfl_errmsg(-1));
}

bool LiveTarget::read(uint64_t addr, void* out, uint64_t size) const {
  auto* dst = static_cast<unsigned char*>(out);
  while (size > 0) {
    const ssize_t n = ::pread(memory_fd_, dst, size, static_cast<off_t>(addr));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    dst += n;
    addr += static_cast<uint64_t>(n);
    size -= static_cast<uint64_t>(n);
  }
  return true;
}

}  // namespace dscope::cli
