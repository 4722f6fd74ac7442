// Writing results so that a reader never sees half a file: the text goes to a temporary
// file in the same directory, is flushed to disk, and replaces the target by rename(2),
// which is atomic on one file system. A failure (full disk, file-size limit, no
// permission) or a stop request (SIGINT, SIGTERM) before the rename removes the temporary
// file and leaves the previous target, if any, untouched.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace fabricsim {

// Writes `text` to `path` atomically. Throws InputError ("OPTION: cannot write PATH:
// reason; ...", `option` the command-line option that named the place, if any) on a
// failure and Interrupted if a stop was requested before the rename.
void write_file_atomic(const std::string& path, const std::string& text,
                       const std::string& option = "--out");

// j as results.json text: indented, and never throwing on text that is not UTF-8 (a path
// or a command-line argument can be anything): such bytes become U+FFFD.
std::string json_text(const nlohmann::json& j);
std::string json_text(const nlohmann::ordered_json& j);  // keys in their insertion order

}  // namespace fabricsim
