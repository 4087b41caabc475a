// The one registry of tccl parameters (SPEC section 6).
//
// Every knob the library reads is declared once in params.cc with its name, type, default and
// description. Values come from, in increasing priority: the built-in default, the config file
// (TCCL_CONF_FILE, else ~/.tccl.conf), the environment (TCCL_<NAME>). Per-communicator fields of
// tcclConfig_t override on top of that for the communicator they configure.
// `tccl-info -c` prints the table; docs/env.md documents the same set (a test keeps them in step).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tccl {

enum class ParamType { Int, String, Bool };

struct ParamInfo {
  const char* name;         // without the TCCL_ prefix
  ParamType type;
  const char* defaultValue;
  const char* description;
  // Int only: the values accepted, inclusive. A value outside them fails communicator creation
  // (CheckParamValues) instead of reaching code that would misread it.
  int64_t minValue = 0, maxValue = 0;
};

struct ParamValue {
  const ParamInfo* info;
  std::string value;
  std::string source;  // "default", "config file <path>", "environment"
};

// All parameters with their resolved values, in declaration order.
std::vector<ParamValue> AllParams();

// Typed access; the name must be declared in the registry (an undeclared name is a bug and
// returns the empty/zero value with a warning). An Int that is not an integer or lies outside its
// range, or a Bool that is not one of 0/1, true/false, yes/no, on/off, reads as its default with a
// warning: a caller outside communicator creation still gets a value the code can use.
int64_t ParamInt(const char* name);
// A String of a fixed vocabulary (TCCL_DEBUG, TCCL_DEBUG_SUBSYS, TCCL_DETERMINISM) comes back with
// its words as the registry spells them, whatever case and spacing it was written in.
std::string ParamString(const char* name);
bool ParamBool(const char* name);

// "" when every parameter's value is one its type accepts; otherwise a sentence naming the first
// that is not, its value, where it came from and what is accepted. Communicator creation fails
// with it (tcclInvalidArgument), so a mistyped or out-of-range setting is reported, not guessed at.
std::string CheckParamValues();

// What a parameter accepts, as docs/env.md's "accepted" column and tccl-info -c print it: an
// Int's "min .. max", a Bool's words, a String's vocabulary where it has one, else "text".
std::string ParamAccepted(const ParamInfo& p);

// Re-reads environment and config file (tests change the environment).
void ReloadParams();

// Parses one config-file text; returns an error sentence for a bad line, or "" when fine.
// Exposed for tests and the fuzzer.
std::string ParseConfText(const std::string& text,
                          std::vector<std::pair<std::string, std::string>>* out);

}  // namespace tccl
