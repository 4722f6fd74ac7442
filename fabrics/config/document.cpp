#include "fabrics/config/document.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>

#include "fabrics/config/input_guard.h"
#include "models/core/errors.h"

namespace fabricsim::cfg {

namespace {

const char* const kSetUsage = "expected key.path=value; e.g. --set workload.max_bytes=1GiB";

// A hint for a yaml-cpp parser message; data and line (0-based) locate the error.
std::string syntax_hint(const std::string& msg, const std::string& data, int line, int column) {
  size_t begin = 0;
  for (int l = 0; l < line && begin != std::string::npos; ++l) {
    begin = data.find('\n', begin);
    if (begin != std::string::npos) ++begin;
  }
  if (begin != std::string::npos) {
    const size_t indent_end = data.find_first_not_of(" \t", begin);
    if (data.find('\t', begin) < indent_end) return "indent with spaces, not tabs";
  }
  if (msg.find("flow") != std::string::npos) return "close every '[' with ']' and every '{' with '}'";
  // yaml-cpp takes a plain key only if its ':' is within 1024 characters of its start.
  if (msg.find("illegal map value") != std::string::npos && column >= 1024)
    return "a key may be at most 1024 characters long; shorten it";
  if (msg.find("illegal map value") != std::string::npos) {
    return "put a nested map on its own indented lines, and quote values that contain ': '";
  }
  if (msg.find("anchor") != std::string::npos) return "define '&name' before using '*name'";
  return "check the indentation, quoting and the ':' after each key near this point";
}

std::string scalar_key(const YAML::Node& key) { return key.IsScalar() ? key.Scalar() : "?"; }

// A key or value holding a control character (a line break, an escape...): refused at its
// place, so that names and values read back in tables and messages stay one printable line.
void check_scalar(const std::string& file, const YAML::Node& n, const std::string& key_path) {
  const std::string c = control_character(n.Scalar());
  if (!c.empty())
    fail(file, n, key_path, "contains a control character (" + c + ")",
         "names and values are one line of printable text");
}

// Walks the tree once: repeated keys, merge keys, control characters in keys and values.
// `open` holds the nodes from the root down to n: an alias to one of them would make the
// tree infinite. `done` holds the source offsets of the maps and sequences already
// checked, so a node repeated by aliases is walked once (check_yaml_size has bounded how
// often it is repeated).
void check_tree(const std::string& file, const YAML::Node& n, const std::string& key_path,
                std::vector<YAML::Node>& open, std::set<int>& done) {
  for (const YAML::Node& ancestor : open) {
    if (ancestor.is(n)) {
      fail(file, n, key_path, "an alias refers to a node that contains it",
           "a '*name' cannot appear inside the node marked '&name'");
    }
  }
  if (n.IsScalar()) check_scalar(file, n, key_path);
  if (!n.IsMap() && !n.IsSequence()) return;
  if (!done.insert(n.Mark().pos).second) return;
  open.push_back(n);
  if (n.IsMap()) {
    check_unique_keys(file, n, key_path);
    for (const auto& kv : n) {
      if (kv.first.IsScalar()) {
        check_scalar(file, kv.first, key_path);
        if (kv.first.Scalar() == "<<")
          fail(file, kv.first, key_path, "merge keys ('<<: *name') are not supported",
               "write the keys out in full; an alias '*name' may still stand for a whole value");
      }
      check_tree(file, kv.second, join_key(key_path, scalar_key(kv.first)), open, done);
    }
  } else {
    for (size_t i = 0; i < n.size(); ++i) {
      check_tree(file, n[i], key_path + "[" + std::to_string(i) + "]", open, done);
    }
  }
  open.pop_back();
}

[[noreturn]] void fail_set(const std::string& assignment, const std::string& problem,
                           const std::string& hint) {
  throw InputError("--set " + printable(assignment) + ": " + problem +
                   (hint.empty() ? "" : "; " + hint));
}

// A copy of a parsed --set value without source positions, so that errors about it
// point at "<--set>" instead of a line of the one-line value text. Repeated keys are
// kept, for the duplicate check to report.
YAML::Node without_marks(const YAML::Node& n, const std::string& assignment, int depth) {
  // Bounds the recursion: an alias inside its own anchor ("&x [*x]") never ends.
  constexpr int kMaxDepth = 64;
  if (depth > kMaxDepth) {
    fail_set(assignment, "the value nests deeper than " + std::to_string(kMaxDepth) + " levels",
             "a '*name' cannot appear inside the node marked '&name'");
  }
  switch (n.Type()) {
    case YAML::NodeType::Scalar: {
      const std::string c = control_character(n.Scalar());
      if (!c.empty())
        fail_set(assignment, "the value contains a control character (" + c + ")",
                 "names and values are one line of printable text");
      return YAML::Node(n.Scalar());
    }
    case YAML::NodeType::Sequence: {
      YAML::Node out(YAML::NodeType::Sequence);
      for (const auto& e : n) out.push_back(without_marks(e, assignment, depth + 1));
      return out;
    }
    case YAML::NodeType::Map: {
      YAML::Node out(YAML::NodeType::Map);
      for (const auto& kv : n) {
        out.force_insert(without_marks(kv.first, assignment, depth + 1),
                         without_marks(kv.second, assignment, depth + 1));
      }
      return out;
    }
    default:
      return YAML::Node(YAML::NodeType::Null);
  }
}

struct PathStep {
  bool is_index = false;
  std::string key;
  size_t index = 0;
};

// "a.b[2].c" -> {a, b, [2], c}; empty on a syntax error.
std::vector<PathStep> parse_path(const std::string& path) {
  std::vector<PathStep> steps;
  size_t i = 0;
  auto read_key = [&]() {
    const size_t begin = i;
    while (i < path.size() && path[i] != '.' && path[i] != '[' && path[i] != ']') ++i;
    if (i == begin) return false;
    steps.push_back({false, path.substr(begin, i - begin), 0});
    return true;
  };
  if (!read_key()) return {};
  while (i < path.size()) {
    if (path[i] == '.') {
      ++i;
      if (!read_key()) return {};
    } else if (path[i] == '[') {
      const size_t begin = ++i;
      while (i < path.size() && std::isdigit(static_cast<unsigned char>(path[i]))) ++i;
      if (i == begin || i >= path.size() || path[i] != ']' || i - begin > 9) return {};
      steps.push_back({true, "", std::stoul(path.substr(begin, i - begin))});
      ++i;
    } else {
      return {};
    }
  }
  return steps;
}

void check_set_value_keys(const std::string& assignment, const YAML::Node& n) {
  if (n.IsMap()) {
    std::vector<std::string> seen;
    for (const auto& kv : n) {
      const std::string key = scalar_key(kv.first);
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
        fail_set(assignment, "duplicate key '" + key + "' in the value", "remove one of them");
      }
      seen.push_back(key);
      check_set_value_keys(assignment, kv.second);
    }
  } else if (n.IsSequence()) {
    for (const auto& e : n) check_set_value_keys(assignment, e);
  }
}

}  // namespace

std::string join_key(const std::string& path, const std::string& key) {
  if (path.empty()) return key;
  if (!key.empty() && key[0] == '[') return path + key;
  return path + "." + key;
}

std::string describe_node(const YAML::Node& n) {
  if (!n.IsDefined()) return "nothing";
  switch (n.Type()) {
    case YAML::NodeType::Null: return "an empty value";
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      return "'" + (s.size() > 40 ? s.substr(0, 37) + "..." : s) + "'";
    }
    case YAML::NodeType::Sequence: return "a sequence";
    case YAML::NodeType::Map: return "a map";
    default: return "nothing";
  }
}

std::string where(const std::string& file, const YAML::Node& n) {
  if (!n.IsDefined()) return file;
  const YAML::Mark m = n.Mark();
  if (m.is_null()) return file + ":<--set>";
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

void fail(const std::string& file, const YAML::Node& at, const std::string& key_path,
          const std::string& problem, const std::string& hint) {
  std::string msg = where(file, at) + ": ";
  if (!key_path.empty()) msg += key_path + ": ";
  // A message is one line of printable text whatever the config held: a value quoted in
  // it may span lines (a folded or quoted scalar) or be cut inside a UTF-8 sequence.
  msg += printable(problem);
  if (!hint.empty()) msg += "; " + printable(hint);
  throw InputError(msg);
}

void check_unique_keys(const std::string& file, const YAML::Node& n, const std::string& key_path) {
  if (!n.IsDefined() || !n.IsMap()) return;
  std::map<std::string, YAML::Node> first;
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) continue;
    const auto [it, inserted] = first.emplace(kv.first.Scalar(), kv.first);
    if (!inserted) {
      const YAML::Mark m = it->second.Mark();
      fail(file, kv.first, key_path, "duplicate key '" + kv.first.Scalar() + "'",
           m.is_null() ? "remove one of them"
                       : "it is first given at line " + std::to_string(m.line + 1) +
                             "; remove one of them");
    }
  }
}

YAML::Node load_yaml_file(const std::string& path) {
  const std::string data = read_config_text(path);
  check_config_text(path, data);
  check_yaml_size(path, data);
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(data);
  } catch (const YAML::Exception& e) {
    const std::string at = e.mark.is_null() ? path
                                            : path + ":" + std::to_string(e.mark.line + 1) + ":" +
                                                  std::to_string(e.mark.column + 1);
    throw InputError(at + ": YAML syntax error: " + e.msg + "; " +
                     syntax_hint(e.msg, data, e.mark.line, e.mark.column));
  }
  if (docs.size() > 1) {
    fail(path, docs[1], "", "found " + std::to_string(docs.size()) + " YAML documents",
         "a config is one document; remove the '---' separators");
  }
  if (docs.empty() || docs[0].IsNull()) {
    throw InputError(path + ":1:1: the config is empty; expected a map of settings ('key: value' lines)");
  }
  const YAML::Node root = docs[0];
  if (!root.IsMap()) {
    fail(path, root, "", "expected a map of settings at the top level, found " + describe_node(root),
         "write 'key: value' lines");
  }
  std::vector<YAML::Node> open;
  std::set<int> done;
  check_tree(path, root, "", open, done);
  return root;
}

void apply_override(YAML::Node root, const std::string& assignment) {
  // Command-line text can hold anything: refuse what could not be echoed back as one
  // printable line (messages, the table, results.json).
  const std::string bad = control_character(assignment);
  if (!bad.empty())
    fail_set(assignment, "contains a control character or invalid UTF-8 (" + bad + ")",
             "write key.path=value as printable UTF-8 text");
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) fail_set(assignment, kSetUsage, "");
  std::string path = assignment.substr(0, eq);
  while (!path.empty() && std::isspace(static_cast<unsigned char>(path.back()))) path.pop_back();
  while (!path.empty() && std::isspace(static_cast<unsigned char>(path.front()))) path.erase(0, 1);
  const std::vector<PathStep> steps = parse_path(path);
  if (steps.empty()) fail_set(assignment, kSetUsage, "");
  FABRICSIM_ASSERT(root.IsMap(), "apply_override needs the loaded config map");

  const std::string value_text = assignment.substr(eq + 1);
  check_yaml_size("--set " + printable(assignment), value_text);
  YAML::Node value;
  try {
    value = without_marks(YAML::Load(value_text), assignment, 0);
  } catch (const YAML::Exception& e) {
    fail_set(assignment, "cannot parse the value '" + value_text + "' as YAML: " + e.msg,
             "quote a plain string, e.g. --set 'a.b=\"text\"'");
  }
  check_set_value_keys(assignment, value);

  YAML::Node cur;
  cur.reset(root);
  std::string walked;
  for (size_t i = 0; i < steps.size(); ++i) {
    const PathStep& step = steps[i];
    const bool last = i + 1 == steps.size();
    if (step.is_index) {
      if (!cur.IsSequence()) {
        fail_set(assignment, "'" + walked + "' is " + describe_node(cur) + ", not a sequence",
                 "use [index] only on lists");
      }
      if (step.index >= cur.size()) {
        fail_set(assignment,
                 "index " + std::to_string(step.index) + " is out of range: '" + walked + "' has " +
                     std::to_string(cur.size()) + " elements",
                 cur.size() == 0 ? "replace the whole list, e.g. --set " + walked + "=[1,2]"
                                 : "use an index from 0 to " + std::to_string(cur.size() - 1));
      }
      if (last) {
        cur[step.index] = value;
      } else {
        cur.reset(cur[step.index]);
      }
      walked += "[" + std::to_string(step.index) + "]";
      continue;
    }
    if (!cur.IsMap() && !cur.IsNull()) {
      fail_set(assignment,
               "'" + walked + "' is " + describe_node(cur) + ", not a map, so it has no key '" +
                   step.key + "'",
               cur.IsSequence() ? "index a list with [N], e.g. " + walked + "[0]" : "check the key path");
    }
    const std::string here = join_key(walked, step.key);
    if (last) {
      cur[step.key] = value;
    } else {
      if (!cur[step.key].IsDefined() || cur[step.key].IsNull()) {
        if (steps[i + 1].is_index) {
          fail_set(assignment, "'" + here + "' is not set, so it has no index " +
                                   std::to_string(steps[i + 1].index),
                   "set the whole list, e.g. --set " + here + "=[1,2]");
        }
        cur[step.key] = YAML::Node(YAML::NodeType::Map);
      }
      cur.reset(cur[step.key]);
    }
    walked = here;
  }
}

std::string key_name(const std::string& file, const YAML::Node& key, const std::string& path) {
  if (!key.IsScalar())
    fail(file, key, path, "expected a key name, found " + describe_node(key),
         "keys are plain names");
  return key.Scalar();
}

std::string scalar(const std::string& file, const YAML::Node& n, const std::string& path,
                   const std::string& what, const std::string& hint) {
  if (!n.IsDefined() || n.IsNull() || !n.IsScalar())
    fail(file, n, path, "expected " + what + ", found " + describe_node(n), hint);
  return n.Scalar();
}

}  // namespace fabricsim::cfg
