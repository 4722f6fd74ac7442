// Guards on config text before and while it is parsed: whatever a file or a --set value
// holds, loading it takes bounded time and memory and every refusal is located
// ("file:line:col: problem; hint"). The limits are far above any real config (the
// largest shipped one is ~8 KiB and ~600 YAML nodes) and far below what would exhaust a
// machine (yaml-cpp keeps ~500 B per node).
#pragma once
#include <cstddef>
#include <string>

#include <yaml-cpp/yaml.h>

namespace fabricsim::cfg {

constexpr size_t kMaxConfigBytes = 16u << 20;  // a config file, read whole
constexpr size_t kMaxYamlNodes = 250000;       // nodes of one document, aliases expanded
constexpr int kMaxYamlDepth = 64;              // nested maps and sequences

// Reads `path` whole, but at most kMaxConfigBytes + 1 bytes (an endless device such as
// /dev/zero stops there; check_config_text refuses what is longer).
std::string read_config_text(const std::string& path);

// The whole text is UTF-8 (no overlong forms, no surrogates), holds no NUL or other
// control character except tab, line feed and carriage return, every carriage return is
// followed by a line feed (CR-only line endings are refused, not read as one line), a
// byte-order mark appears only at the very start, and it is at most kMaxConfigBytes long.
// Throws InputError located at the first offending byte (binary content is found there
// before the length is judged).
void check_config_text(const std::string& file, const std::string& text);

// Streams the YAML events of `text` without building nodes and refuses, at the place it
// happens, a document of more than kMaxYamlNodes nodes counting every alias as the nodes
// of its anchor (a "billion laughs" of nested aliases is refused after reading it once),
// or nesting deeper than kMaxYamlDepth. Syntax errors are left to the parser that follows.
// `file` names the source in messages ("--set ..." for an override value).
void check_yaml_size(const std::string& file, const std::string& text);

// The first control character of a scalar (C0 including tab and line breaks, DEL, C1),
// as "U+001B", or "" if there is none: names and values are one line of printable text.
std::string control_character(const std::string& s);

// s with every control character and invalid byte written as an escape ("\\x1b"): command-line
// text echoed in a message.
std::string printable(const std::string& s);

}  // namespace fabricsim::cfg
