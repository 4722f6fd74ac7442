// Loading YAML configs with source locations, and the one error format for bad input:
//   "file:line:col: key.path: problem; hint"   (line and column 1-based)
#pragma once
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "models/core/text.h"

namespace fabricsim::cfg {

// Reads and parses a config file whose top level is a map. Every failure (unreadable,
// binary, YAML syntax, several documents, empty, top level not a map, a key repeated in
// any map) throws InputError with the file and, where known, line:col.
YAML::Node load_yaml_file(const std::string& path);

// "file:line:col" of n (1-based). A node without a source position (one given by
// --set) gives "file:<--set>"; a missing or undefined node gives just "file".
std::string where(const std::string& file, const YAML::Node& n);

// Throws InputError("file:line:col: key_path: problem; hint"). An empty key_path or hint
// is left out together with its separator.
[[noreturn]] void fail(const std::string& file, const YAML::Node& at, const std::string& key_path,
                       const std::string& problem, const std::string& hint);

// Throws InputError if the map n has a key twice (yaml-cpp keeps both silently). The
// error points at the second occurrence. Not recursive; load_yaml_file checks the whole
// tree.
void check_unique_keys(const std::string& file, const YAML::Node& n, const std::string& key_path);

// Applies one "--set key.path=value" to root. The path walks maps by key and sequences
// by [index] ("topology.links_per_switch[2]=5"). Missing map keys are created, so the
// schema check reports misspelt ones; an index must exist. The value is parsed as YAML
// ("[5,4,4,5]" is a sequence, "8GiB" a string) and carries no source position, so
// errors about it say "<--set>". Throws InputError("--set ASSIGNMENT: problem; hint").
void apply_override(YAML::Node root, const std::string& assignment);

// A map key as a name; a key that is not a scalar is bad input (located at the key).
std::string key_name(const std::string& file, const YAML::Node& key, const std::string& path);

// The scalar text of n; throws InputError "expected WHAT, found ..." with `hint` if n is
// missing, empty or not a scalar.
std::string scalar(const std::string& file, const YAML::Node& n, const std::string& path,
                   const std::string& what, const std::string& hint);

// "a map", "a sequence", "an empty value", "'text'" (a scalar), "nothing" (missing):
// for "expected X, found Y".
std::string describe_node(const YAML::Node& n);

// A YAML::Node held as a member of a copyable type. Assigning a YAML::Node writes
// through: the node it refers to takes the right-hand side's contents, inside its tree.
// Assigning a NodeRef only rebinds the reference. A missing node (from const operator[])
// is held as an undefined one, which where() reports as just the file.
class NodeRef {
 public:
  NodeRef() = default;
  NodeRef(const YAML::Node& n)  // NOLINT(google-explicit-constructor): a drop-in holder
      : node_(n.IsDefined() ? n : YAML::Node(YAML::NodeType::Undefined)) {}
  NodeRef(const NodeRef& other) = default;
  NodeRef& operator=(const NodeRef& other) {
    node_.reset(other.node_);
    return *this;
  }
  const YAML::Node& get() const { return node_; }

 private:
  YAML::Node node_{YAML::NodeType::Undefined};
};

// "a.b" + "c" -> "a.b.c"; "" + "c" -> "c".
std::string join_key(const std::string& path, const std::string& key);

}  // namespace fabricsim::cfg
