// dscope: DispatchScope without a debugger.
//   dscope core [--json] CORE [EXE] [COMMAND ...]     one core: a command's text (or JSON)
//   dscope core [--json] [-j N] CORE|DIR ...          many cores: one summary (or JSON line) each
//   dscope pid [--json] PID [COMMAND ...]             a running process, stopped while it is read
//   ... --commands FILE in place of COMMAND: FILE's commands, one session (the target read once)
// (core --sysroot DIR: the cores' processes ran in the root DIR holds a copy of, e.g. a container
// image; a live process's files are found in its own root, /proc/PID/root)
// opens core files (and processes) with elfutils and runs the inspect library's commands on them (dispatch-summary
// by default), printing what GDB and LLDB print for the same core and command. A batch runs each
// core in a worker process of its own: a core that breaks its worker is that core's error record,
// never the end of the batch.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gelf.h>

#include "CoreTarget.h"
#include "ElfutilsGuard.h"
#include "text/Json.h"
#include "LiveTarget.h"
#include "dscope/inspect.h"

namespace {

using dscope::inspect::Json;

const char* const kUsage =
    "usage: dscope core [--json] [--sysroot DIR] CORE [EXE] [COMMAND ... | --commands FILE] | "
    "dscope core [--json] [--sysroot DIR] [-j N] CORE|DIR ... | dscope pid [--json] PID [COMMAND ... | --commands FILE]";
const char* const kDefaultCommand = "dispatch-summary";
// The version of a JSON record of `dscope core --json` (docs/JSON-SCHEMA.md): a minor step adds
// fields, a major one changes or removes any.
const char* const kRecordVersion = "1.0";
constexpr int kWorkerSeconds = 300;  // one core's analysis; past it the worker is killed
constexpr int kWorkerAnsweredError = 3;  // a worker's exit status when its answer is the core's error

int usage(const std::string& problem) {
  std::fprintf(stderr, "dscope: %s; %s\n", problem.c_str(), kUsage);
  return 2;
}

// What a path on the command line is: a directory of cores, an ELF program (the EXE), or a core
// (anything else: a compressed core, or a file that turns out to be no core and says so).
enum class PathKind { None, Directory, Program, Core };

PathKind kindOf(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return PathKind::None;
  if (S_ISDIR(st.st_mode)) return PathKind::Directory;
  if (!S_ISREG(st.st_mode)) return PathKind::None;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return PathKind::Core;  // it says why it cannot be opened
  elf_version(EV_CURRENT);
  PathKind kind = PathKind::Core;
  if (Elf* elf = elf_begin(fd, ELF_C_READ, nullptr)) {
    GElf_Ehdr ehdr;
    if (elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &ehdr) && ehdr.e_type != ET_CORE) kind = PathKind::Program;
    elf_end(elf);
  }
  ::close(fd);
  return kind;
}

// A core of a batch, or the one line why it is none before any worker looks (a directory that
// cannot be listed).
struct Input {
  std::string path;
  std::string error;
};

// A name (in a dscope: line, a "core NAME:" line) as the terminal gets it: control characters (a newline,
// ESC), C1 controls and bytes that are no UTF-8 as \n, \t, \xNN; the rest, UTF-8 included, as is.
std::string printable(std::string_view s) {
  std::string out;
  for (size_t at = 0; at < s.size();) {
    const auto c = static_cast<unsigned char>(s[at]);
    const size_t n = dscope::inspect::utf8SequenceAt(s, at);
    const bool c1 = n == 2 && c == 0xc2 && static_cast<unsigned char>(s[at + 1]) < 0xa0;
    if (n > 1 && !c1) {
      out.append(s, at, n);
      at += n;
      continue;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else if (c == '\n' || c == '\t') {
      out += c == '\n' ? "\\n" : "\\t";
    } else {
      for (size_t k = 0; k < (c1 ? 2u : 1u); ++k) {
        char hex[5];
        std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(s[at + k]));
        out += hex;
      }
      at += c1 ? 1 : 0;
    }
    ++at;
  }
  return out;
}

// The files of a directory, sorted by name (a batch's records follow that order): all but its
// subdirectories and hidden (dot) files, so that what cannot be read (a dangling link, a link
// loop, a FIFO, an unreadable file) gets its error record rather than nothing.
void addFilesIn(const std::string& dir, std::vector<Input>& inputs) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    inputs.push_back({dir, "dscope: cannot list the directory " + printable(dir) + ": " + std::strerror(errno)});
    return;
  }
  std::vector<std::string> files;
  while (const dirent* e = ::readdir(d)) {
    const std::string path = (std::filesystem::path(dir) / e->d_name).string();  // "DIR/" gives no "//"
    struct stat st{};
    if (e->d_name[0] != '.' && !(::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) files.push_back(path);
  }
  ::closedir(d);
  std::sort(files.begin(), files.end());
  for (auto& f : files) inputs.push_back({std::move(f), ""});
}

bool isCommand(const std::string& word) {
  int is_error = 0;
  char* usage = dscope_inspect_usage(word.c_str(), &is_error);
  dscope_inspect_free(usage);
  return usage && !is_error;
}

struct Answer {
  std::string text;
  bool is_error = false;
  std::vector<std::string> notes;  // what the target lacks (DwflTarget::notes)
};

// Opens a target (open(): a core, a process) and runs each command on it in turn, one session as in
// a debugger: the pages, symbols and dispatcher indexes the first command reads serve the rest.
// each(command, answer) gets each command's text or its one "dscope:" line as it is answered, the
// target's notes with the first; a target that cannot be opened, or is lost, ends the session with
// its line (command null).
template <class Open, class Each>
void runOn(Open open, const std::vector<std::string>& commands, Each each) {
  try {
    const auto target = open();
    bool first = true;
    for (const auto& command : commands) {
      int is_error = 0;
      char* text = dscope_inspect_run(target->target(), command.c_str(), &is_error);
      if (!text) return each(nullptr, Answer{"dscope: out of memory\n", true, {}});
      Answer answer{text, is_error != 0, first ? target->notes() : std::vector<std::string>{}};
      dscope_inspect_free(text);
      if (auto lost = target->lost()) return each(nullptr, Answer{"dscope: " + *lost + "\n", true, {}});
      each(&command, std::move(answer));
      first = false;
    }
  } catch (const std::bad_alloc&) {  // the target, ended while this unwound, gave its memory back
    const std::string limit = dscope::cli::underAddressSpaceLimit("the core and the module files it maps do not fit");
    each(nullptr, Answer{"dscope: out of memory" + (limit.empty() ? std::string(" reading the target") : limit) + "\n", true, {}});
  } catch (const std::exception& e) {  // its message names files: one printable line
    each(nullptr, Answer{"dscope: " + printable(e.what()) + "\n", true, {}});
  }
}

// One command: its answer.
template <class Open>
Answer runOn(Open open, const std::string& command) {
  Answer out;
  runOn(open, {command}, [&](const std::string*, Answer a) { out = std::move(a); });
  return out;
}

// --sysroot DIR: where the files of every core's process are (a copy of the root it ran in).
std::string sysroot;

Answer runOnCore(const std::string& core, const std::string& executable, const std::string& command) {
  return runOn([&] { return std::make_unique<dscope::cli::CoreTarget>(core, executable, sysroot); }, command);
}

std::string noteLines(const Answer& a) {
  std::string out;
  for (const auto& note : a.notes) out += "note: " + printable(note) + "\n";
  return out;
}

// The answer on stdout (its notes first, on stderr), or its one line on stderr: the exit status.
int print(const Answer& a) {
  std::fputs(noteLines(a).c_str(), stderr);
  std::fputs(a.text.c_str(), a.is_error ? stderr : stdout);
  return a.is_error ? 1 : 0;
}

// A record's first fields.
Json recordStart(const std::string& core) {
  Json j;
  j.beginObject().field("schema", "dscope-core").field("version", kRecordVersion).field("core", core);
  return j;
}

// "notes", where the target lacks something (a truncated core's missing memory): in a summary
// record and in an error record alike, since what is missing is often why the core gave no summary.
void noteField(Json& j, const std::vector<std::string>& notes) {
  if (notes.empty()) return;
  j.key("notes").beginArray();
  for (const auto& note : notes) j.value(note);
  j.endArray();
}

// "core" keeps the name as it is (JSON escapes it losslessly).
std::string errorRecord(const std::string& core, const std::string& line, const std::vector<std::string>& notes = {}) {
  Json j = recordStart(core);
  noteField(j, notes);
  std::string message = line;
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return j.field("error", message).endObject().str();
}

// A batch's output for a core that gave no answer: its error record, or its name and line.
std::string errorOutput(const std::string& core, const std::string& line, bool json) {
  return json ? errorRecord(core, line) : "core " + printable(core) + ":\n" + line + "\n";
}

// What a core gets from the default command: with json its record (docs/JSON-SCHEMA.md), else its
// name and its summary or its one line.
Answer coreOutput(const std::string& core, const std::string& executable, bool json) {
  const Answer a = runOnCore(core, executable, std::string(kDefaultCommand) + (json ? " --json" : ""));
  if (!json) return {"core " + printable(core) + ":\n" + noteLines(a) + a.text, a.is_error, {}};
  if (a.is_error) return {errorRecord(core, a.text, a.notes), true, {}};
  Json j = recordStart(core);
  j.key("executable");
  if (executable.empty()) j.null();
  else j.value(executable);
  noteField(j, a.notes);
  return {j.key("summary").raw(a.text).endObject().str(), false, {}};
}

// Whether everything printed so far reached standard output; else why not (the run fails).
bool flushedStdout(int& error) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return true;
  error = errno ? errno : EIO;
  return false;
}

bool write_failure_said = false;  // the run's one line about it

int writeFailed(int error) {
  if (!write_failure_said) std::fprintf(stderr, "dscope: cannot write to standard output: %s\n", std::strerror(error));
  write_failure_said = true;
  return 1;
}

// The batch: each core in a worker process, at most `jobs` at once; the answers are printed in the
// cores' order as they complete. Every input gets its record: a worker that cannot start is its
// core's error record (when others run, it waits for one to end and tries again).
int runBatch(const std::vector<Input>& cores, bool json, int jobs) {
  struct Worker {
    pid_t pid;
    int fd;
    size_t index;
    std::string out;
    std::chrono::steady_clock::time_point deadline;
    bool timed_out = false;
  };
  std::vector<Worker> running;
  std::map<size_t, std::string> done;
  size_t next = 0, printed = 0;
  bool any_error = false;
  bool wait_for_one = false;  // a worker could not start: until one ends, start none
  auto finish = [&](Worker& w) {
    int status = 0;
    ::waitpid(w.pid, &status, 0);
    ::close(w.fd);
    const std::string& core = cores[w.index].path;
    const bool answered = WIFEXITED(status) && !w.out.empty() &&
                          (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == kWorkerAnsweredError);
    any_error = any_error || !answered || WEXITSTATUS(status) == kWorkerAnsweredError;
    if (!answered) {
      std::string why = "ended without an answer";
      if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        why = w.timed_out ? "took more than " + std::to_string(kWorkerSeconds) + " s"
                          : "was killed by SIGKILL before its " + std::to_string(kWorkerSeconds) +
                                " s were up (the system may have run out of memory)";
      else if (WIFSIGNALED(status))
        why = std::string("died of ") + strsignal(WTERMSIG(status));
      w.out = errorOutput(core, "dscope: the analysis of " + printable(core) + " " + why, json);
    }
    done[w.index] = std::move(w.out);
    wait_for_one = false;
  };
  int write_error = 0;
  if (!flushedStdout(write_error)) return writeFailed(write_error);
  while ((next < cores.size() || !running.empty()) && write_error == 0) {
    while (next < cores.size() && running.size() < static_cast<size_t>(jobs) && !wait_for_one) {
      const std::string& core = cores[next].path;
      if (!cores[next].error.empty()) {
        done[next] = errorOutput(core, cores[next].error, json);
        any_error = true;
        ++next;
        continue;
      }
      int pipe_fds[2];
      int error = 0;
      if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        error = errno;
      } else {
        const pid_t pid = ::fork();
        if (pid == 0) {
          ::close(pipe_fds[0]);
          const Answer out = coreOutput(core, "", json);
          for (size_t at = 0; at < out.text.size();) {
            const ssize_t n = ::write(pipe_fds[1], out.text.data() + at, out.text.size() - at);
            if (n <= 0) ::_exit(1);
            at += static_cast<size_t>(n);
          }
          ::_exit(out.is_error ? kWorkerAnsweredError : 0);
        }
        error = errno;
        ::close(pipe_fds[1]);
        if (pid > 0) {
          running.push_back({pid, pipe_fds[0], next++, "",
                             std::chrono::steady_clock::now() + std::chrono::seconds(kWorkerSeconds)});
          continue;
        }
        ::close(pipe_fds[0]);
      }
      if (!running.empty()) {  // out of processes or descriptors: one of the workers' may come free
        wait_for_one = true;
        break;
      }
      done[next] = errorOutput(core, "dscope: cannot start a worker for " + printable(core) + ": " + std::strerror(error) +
                                         (error == EAGAIN ? " (the process limit, ulimit -u)" : ""),
                               json);
      any_error = true;
      ++next;
    }
    if (!running.empty()) {
      std::vector<pollfd> fds;
      for (const auto& w : running) fds.push_back({w.fd, POLLIN, 0});
      ::poll(fds.data(), fds.size(), 1000);
      for (size_t i = running.size(); i-- > 0;) {
        Worker& w = running[i];
        bool ended = false;
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
          char buffer[65536];
          const ssize_t n = ::read(w.fd, buffer, sizeof buffer);
          if (n > 0) w.out.append(buffer, static_cast<size_t>(n));
          ended = n <= 0;
        }
        if (!ended && std::chrono::steady_clock::now() > w.deadline) {
          ::kill(w.pid, SIGKILL);
          w.out.clear();
          w.timed_out = true;
          ended = true;
        }
        if (ended) {
          finish(w);
          running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        }
      }
    }
    for (auto it = done.find(printed); it != done.end() && write_error == 0; it = done.find(printed)) {
      std::fputs(((!json && printed ? "\n" : "") + it->second).c_str(), stdout);
      flushedStdout(write_error);
      done.erase(it);
      ++printed;
    }
  }
  if (write_error != 0) {  // no worker outlives the run
    for (Worker& w : running) {
      ::kill(w.pid, SIGKILL);
      ::waitpid(w.pid, nullptr, 0);
      ::close(w.fd);
    }
    return writeFailed(write_error);
  }
  return any_error ? 1 : 0;
}

// A command line as --json asks for it: with its own --json (once).
std::string asJson(const std::string& command) {
  return command.find("--json") == std::string::npos ? command + " --json" : command;
}

// --commands FILE ('-': standard input): a session's commands, one a line; blank lines and '#'
// comments are skipped. Empty with *why set when the file cannot be read or holds none.
std::vector<std::string> readCommands(const std::string& path, std::string* why) {
  FILE* in = path == "-" ? stdin : std::fopen(path.c_str(), "r");
  if (!in) return *why = "cannot read the commands file " + printable(path) + ": " + std::strerror(errno), std::vector<std::string>{};
  std::vector<std::string> commands;
  std::string line;
  for (int c = 0; c != EOF;) {
    c = std::fgetc(in);
    if (c != '\n' && c != EOF) {
      line += static_cast<char>(c);
      continue;
    }
    const size_t start = line.find_first_not_of(" \t\r");
    if (start != std::string::npos && line[start] != '#') commands.push_back(line.substr(start));
    line.clear();
  }
  const bool failed = std::ferror(in);
  if (in != stdin) std::fclose(in);
  if (failed) return *why = "cannot read the commands file " + printable(path), std::vector<std::string>{};
  if (commands.empty()) *why = "the commands file " + printable(path) + " holds no command";
  return commands;
}

// A session's transcript on standard output, in order: each command after a "(dscope) COMMAND"
// line (text only: --json answers are JSON documents, one after another), then its answer or its
// one "dscope:" line; the target's notes on standard error. A target that cannot be read is its one
// line on standard error. 1 when any command or the target failed.
template <class Open>
int printSession(Open open, std::vector<std::string> commands, bool json) {
  if (json)
    for (auto& command : commands) command = asJson(command);
  int status = 0;
  runOn(open, commands, [&](const std::string* command, const Answer& a) {
    std::fputs(noteLines(a).c_str(), stderr);
    if (command && !json) std::printf("(dscope) %s\n", command->c_str());
    std::fputs(a.text.c_str(), command ? stdout : stderr);
    status = status || a.is_error;
  });
  return status;
}

// Whether args[next] is "--commands FILE" (or "--commands=FILE"), in the place of a command.
bool isCommandsOption(const std::vector<std::string>& args, size_t next) {
  return next < args.size() && (args[next] == "--commands" || args[next].rfind("--commands=", 0) == 0);
}

// --commands FILE, nothing after it: the session's exit status.
template <class Open>
int runSession(const std::vector<std::string>& args, size_t next, Open open, bool json) {
  const bool separate = args[next] == "--commands";
  const std::string file = separate ? (next + 1 < args.size() ? args[next + 1] : "") : args[next].substr(11);
  if (file.empty()) return usage("--commands takes a file of commands, one a line ('-': standard input)");
  if (next + (separate ? 2 : 1) < args.size()) return usage("--commands FILE takes the place of COMMAND: give one or the other");
  std::string why;
  const auto commands = readCommands(file, &why);
  if (commands.empty()) return usage(why);
  return printSession(open, commands, json);
}

// dscope pid [--json] PID [COMMAND ...]: one command on a live process, its threads stopped while
// it is read.
int runOnProcess(const std::vector<std::string>& args) {
  size_t next = 1;
  const bool json = next < args.size() && args[next] == "--json";
  next += json;
  if (next >= args.size()) return usage("no process id");
  const std::string& id = args[next++];
  char* end = nullptr;
  const long pid = std::strtol(id.c_str(), &end, 10);
  if (id.empty() || *end) return usage("'" + id + "' is no process id");
  auto open = [&] {
    if (pid <= 0 || pid > INT32_MAX) throw std::runtime_error("no process with pid " + id);
    return std::make_unique<dscope::cli::LiveTarget>(static_cast<pid_t>(pid));
  };
  if (isCommandsOption(args, next)) return runSession(args, next, open, json);
  std::string command;
  for (; next < args.size(); ++next) command += (command.empty() ? "" : " ") + args[next];
  if (command.empty()) command = kDefaultCommand;
  if (json) command = asJson(command);
  return print(runOn(open, command));
}

// dscope core ... and dscope pid ...: the exit status.
int run(const std::vector<std::string>& args) {
  if (args.empty()) return usage("no command");
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
    std::printf("%s\n", kUsage);  // asked for: an answer (stdout, exit 0), not a usage error
    return 0;
  }
  if (args[0] == "pid") return runOnProcess(args);
  if (args[0] != "core") return usage("unknown command '" + args[0] + "'");
  bool json = false;
  int jobs = 1;
  size_t next = 1;
  for (; next < args.size() && args[next].rfind("-", 0) == 0; ++next) {
    if (args[next] == "--json") {
      json = true;
    } else if (args[next] == "--sysroot" || args[next].rfind("--sysroot=", 0) == 0) {
      sysroot = args[next] == "--sysroot" ? (next + 1 < args.size() ? args[++next] : "") : args[next].substr(10);
      struct stat st {};
      if (sysroot.empty() || ::stat(sysroot.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return usage("--sysroot takes a directory (a copy of the root the process ran in), not '" + sysroot + "'");
    } else if (args[next] == "-j" || args[next].rfind("-j", 0) == 0) {
      const std::string n = args[next] == "-j" ? (next + 1 < args.size() ? args[++next] : "") : args[next].substr(2);
      char* end = nullptr;
      const long v = std::strtol(n.c_str(), &end, 10);
      if (n.empty() || *end || v < 1 || v > 256) return usage("-j takes a number of workers from 1 to 256, not '" + n + "'");
      jobs = static_cast<int>(v);
    } else {
      return usage("unknown option '" + args[next] + "'");
    }
  }
  if (next >= args.size() || isCommand(args[next]) || isCommandsOption(args, next)) return usage("no core file");
  // The cores (and a directory's files), a program for a single core, then the command's words
  // from the first word that names one of the library's commands, or that names no file and looks
  // like no file name either, without '/' or '.' (a mistyped command: the library answers "unknown
  // command" for it; a missing "x.core" stays a core that cannot be opened).
  std::vector<Input> cores;
  std::string executable;
  bool several = false;
  for (; next < args.size() && !isCommand(args[next]) && !isCommandsOption(args, next); ++next) {
    const PathKind kind = kindOf(args[next]);
    if (!cores.empty() && kind == PathKind::None && args[next].find_first_of("/.") == std::string::npos) break;
    if (kind == PathKind::Directory) {
      addFilesIn(args[next], cores);
      several = true;
    } else if (kind == PathKind::Program && executable.empty() && cores.size() == 1 && !several) {
      executable = args[next];
    } else {
      cores.push_back({args[next], ""});  // what is no core says so when opened
      several = several || cores.size() > 1 || !executable.empty();
    }
  }
  if (isCommandsOption(args, next)) {
    if (several) return usage("--commands goes with one core");
    return runSession(args, next, [&] { return std::make_unique<dscope::cli::CoreTarget>(cores[0].path, executable, sysroot); },
                      json);
  }
  std::string command;
  for (; next < args.size(); ++next) command += (command.empty() ? "" : " ") + args[next];
  if (several) {
    if (!command.empty() || !executable.empty())
      return usage("a command, or a program, goes with one core: several cores get their summaries (the program each names)");
    if (cores.empty()) return usage("no core file in the directory");
    return runBatch(cores, json, jobs);
  }
  if (command.empty()) {
    if (json) {
      const Answer record = coreOutput(cores[0].path, executable, true);
      std::fputs(record.text.c_str(), stdout);
      return record.is_error ? 1 : 0;
    }
    command = kDefaultCommand;
  } else if (json) {
    command = asJson(command);
  }
  return print(runOnCore(cores[0].path, executable, command));
}

}  // namespace

int main(int argc, char** argv) {
  // Debug info comes from the files on this machine: libdwfl's standard callbacks would ask the
  // debuginfod servers DEBUGINFOD_URLS names (Debian sets it), waiting up to 90 s a module for a
  // server that does not answer; dscope needs no downloads.
  ::unsetenv("DEBUGINFOD_URLS");
  // Past a file size limit (ulimit -f) a decompression's write fails with EFBIG, said in one line,
  // rather than the kernel killing dscope.
  ::signal(SIGXFSZ, SIG_IGN);
  // A closed descriptor 0 or 2 would be taken by the first file dscope opens; a closed stdout
  // leaves the answer nowhere to go.
  for (int fd : {0, 2})
    if (::fcntl(fd, F_GETFD) < 0 && ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd) return 1;
  if (::fcntl(1, F_GETFD) < 0) return writeFailed(EBADF);
  const int status = run(std::vector<std::string>(argv + 1, argv + argc));
  int error = 0;
  return flushedStdout(error) ? status : writeFailed(error);
}
