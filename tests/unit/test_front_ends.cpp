// The front ends' tables of libdscope_inspect (inspect.h, front ends): what GDB's and LLDB's front
// ends place, read and register comes from here, so their rows must be whole and agree.
#include <doctest/doctest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "dscope/inspect.h"

namespace {

const char* const kFrontEnds[] = {"gdb", "lldb"};

std::vector<const dscope_break_point*> pointsOf(const char* front_end) {
  std::vector<const dscope_break_point*> rows;
  for (uint64_t i = 0; const dscope_break_point* row = dscope_break_point_at(front_end, i); ++i) rows.push_back(row);
  return rows;
}

std::vector<const dscope_command_help*> commandsOf(const char* front_end) {
  std::vector<const dscope_command_help*> rows;
  for (uint64_t i = 0; const dscope_command_help* row = dscope_command_at(front_end, i); ++i) rows.push_back(row);
  return rows;
}

// What the library completes the word being typed with after `command arguments`: "EXPRESSION"
// for the debugger's own completion, else each addition to the word, then a newline.
std::string completed(const char* command, const char* arguments, const dscope_target* target = nullptr) {
  int completes = -1;
  char* names = dscope_inspect_complete(target, command, arguments, &completes);
  std::string out = names ? names : "(null)";
  dscope_inspect_free(names);
  if (completes == DSCOPE_COMPLETES_EXPRESSION) return out.empty() ? "EXPRESSION" : "EXPRESSION with " + out;
  return completes == DSCOPE_COMPLETES_NAMES ? out : "completes " + std::to_string(completes);
}

}  // namespace

TEST_SUITE("front ends") {
  TEST_CASE("break points: one hook whose stops the library answers, somewhere to arm and to place the kernels") {
    for (const char* front_end : kFrontEnds) {
      CAPTURE(front_end);
      const auto rows = pointsOf(front_end);
      int hits = 0, arms = 0, locates = 0;
      std::set<std::string> names;
      for (const dscope_break_point* row : rows) {
        REQUIRE(row->name);
        CHECK(names.insert(row->name).second);  // one native breakpoint per place
        CHECK((row->where == DSCOPE_POINT_FUNCTION || row->where == DSCOPE_POINT_LOAD));
        CHECK(row->does != 0);
        if (row->does & DSCOPE_POINT_HITS) {
          ++hits;
          CHECK(row->does == DSCOPE_POINT_HITS);  // a hook's stops are dscope_breaks_hit's alone
          CHECK(row->where == DSCOPE_POINT_FUNCTION);
          CHECK(std::string(row->name) == "dscope_debug_break_hook");  // the runtime's (DebugInterface.h)
        }
        arms += (row->does & DSCOPE_POINT_ARMS) != 0;
        locates += (row->does & DSCOPE_POINT_LOCATES) != 0;
      }
      CHECK(hits == 1);
      CHECK(arms >= 1);
      CHECK(locates >= 1);
      CHECK(rows.front() == dscope_break_point_at(front_end, 0));  // static rows: the same each time
    }
    CHECK(dscope_break_point_at("dbx", 0) == nullptr);
    CHECK(dscope_break_point_at(nullptr, 0) == nullptr);
  }

  TEST_CASE("stop registers: pc, sp and the six integer argument registers, as dscope_stop_registers orders them") {
    std::vector<std::string> names;
    for (uint64_t i = 0; const char* name = dscope_stop_register_at(i); ++i) names.push_back(name);
    CHECK(names.size() * sizeof(uint64_t) + sizeof(int64_t) == sizeof(dscope_stop_registers));
    REQUIRE(names.size() >= 2);
    CHECK(names[0] == "pc");
    CHECK(names[1] == "sp");
    CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
    REQUIRE(dscope_thread_pointer_register());
    CHECK(std::strlen(dscope_thread_pointer_register()) > 0);
  }

  TEST_CASE("commands: the same commands in every front end, each with its usage, a one-line summary and help") {
    const auto gdb = commandsOf("gdb"), lldb = commandsOf("lldb");
    REQUIRE(gdb.size() == lldb.size());
    REQUIRE(!gdb.empty());
    int breaks = 0;
    for (size_t i = 0; i < gdb.size(); ++i) {
      CAPTURE(gdb[i]->name);
      CHECK(std::string(gdb[i]->name) == lldb[i]->name);
      CHECK(std::string(gdb[i]->summary) == lldb[i]->summary);
      CHECK(gdb[i]->flags == lldb[i]->flags);
      for (const dscope_command_help* row : {gdb[i], lldb[i]}) {
        const std::string summary = row->summary, details = row->details;
        CHECK(!summary.empty());
        CHECK(summary.find('\n') == std::string::npos);
        CHECK(!details.empty());
        CHECK(details.back() != '\n');
        CHECK(details.find("\n\n\n") == std::string::npos);
        // Paragraphs of one line each, separated by one empty line.
        for (size_t at = 0; (at = details.find('\n', at)) != std::string::npos; at += 2) CHECK(details[at + 1] == '\n');
      }
      // Each debugger's own words: the other's name never appears in its help.
      CHECK(std::string(gdb[i]->details).find("LLDB") == std::string::npos);
      CHECK(std::string(lldb[i]->details).find("GDB") == std::string::npos);
      int is_error = -1;
      char* usage = dscope_inspect_usage(gdb[i]->name, &is_error);
      CHECK(is_error == 0);
      dscope_inspect_free(usage);
      if (gdb[i]->flags & DSCOPE_COMMAND_BREAKS) {
        ++breaks;
        CHECK(std::string(gdb[i]->name) == "dispatch-break");
      }
    }
    CHECK(breaks == 1);
    CHECK(dscope_command_at("dbx", 0) == nullptr);
    CHECK(dscope_command_at(nullptr, 0) == nullptr);
  }

  TEST_CASE("completion: the commands' own options decide what the word being typed is") {
    // Without a process the key names are DispatchScope's own table's (and no operator is known).
    CHECK(completed("op-table", "aten::mm --key AutogradC") == "PU\nUDA\n");
    CHECK(completed("op-table", "--missing Met") == "a\nal\n");  // Meta, Metal
    CHECK(completed("op-table", "--missing Meta") == "\nl\n");  // the word is a name already
    CHECK(completed("dispatch-break", "--key CP") == "U\n");
    CHECK(completed("op-table", "--key ") == completed("op-table", "--missing "));
    CHECK(completed("op-table", "--key ").find("CPU\n") != std::string::npos);
    // Another option's value, an option, a word where the command takes none: nothing.
    CHECK(completed("dispatch-trace", "--thread ").empty());
    CHECK(completed("dispatch-trace", "--max-frames 1").empty());
    CHECK(completed("op-table", "--runtime t").empty());
    CHECK(completed("dispatch-break", "--delete ").empty());
    CHECK(completed("op-table", "--k").empty());
    CHECK(completed("dispatch-summary", "").empty());
    CHECK(completed("keyset", "--thread ").empty());
    // keyset's operand and --explain's value are expressions; an option is not.
    CHECK(completed("keyset", "") == "EXPRESSION");
    CHECK(completed("keyset", "dscope_debug_desc") == "EXPRESSION");
    CHECK(completed("keyset", "--tls --explain ks") == "EXPRESSION");
    CHECK(completed("keyset", "--tls --thread 2 ") == "EXPRESSION");
    CHECK(completed("keyset", "--tl").empty());
    // A key name is no option's value once a space ends it; quotes are read as the command reads them.
    CHECK(completed("op-table", "--key CPU") == "\n");
    CHECK(completed("op-table", "--key 'AutogradC") == "PU\nUDA\n");
    CHECK(completed("op-table", "--key 'AutogradCPU' ").empty());  // the operator's place: none known
    // No such command: nothing, never an error line.
    CHECK(completed("dispatch-break-parse", "").empty());
    CHECK(completed(nullptr, nullptr).empty());
  }

  TEST_CASE("messages: the lines a front end prints itself") {
    CHECK(std::string(dscope_inspect_message(DSCOPE_MESSAGE_PROCESS_RUNNING)) ==
          "dscope: the process is running: stop it first (GDB: interrupt, LLDB: process interrupt)");
    CHECK(std::string(dscope_inspect_message(DSCOPE_MESSAGE_INTERRUPTED)) == "dscope: interrupted (Ctrl-C)");
    CHECK(dscope_inspect_message(-1) == nullptr);
    CHECK(dscope_inspect_message(DSCOPE_MESSAGE_INTERRUPTED + 1) == nullptr);
  }
}
