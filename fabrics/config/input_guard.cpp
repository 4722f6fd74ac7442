#include "fabrics/config/input_guard.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "models/core/errors.h"
#include "models/core/units.h"

namespace fabricsim::cfg {

namespace {

std::string hex_byte(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", c);
  return buf;
}

std::string code_point(uint32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", cp);
  return buf;
}

// What a control character is, for messages.
std::string control_name(uint32_t cp) {
  switch (cp) {
    case 0x00: return code_point(cp) + ", a NUL byte";
    case 0x09: return code_point(cp) + ", a tab";
    case 0x0A: return code_point(cp) + ", a line break";
    case 0x0D: return code_point(cp) + ", a carriage return";
    case 0x1B: return code_point(cp) + ", an escape (terminal colour codes start with it)";
    default: return code_point(cp);
  }
}

bool is_control(uint32_t cp) { return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F); }

// Decodes the UTF-8 sequence at s[i]; returns its length (0 if invalid) and the code point.
size_t decode(const std::string& s, size_t i, uint32_t& cp) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  size_t len = 0;
  uint32_t min_cp = 0;  // smaller code points in this length are overlong encodings
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    min_cp = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    min_cp = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    min_cp = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  cp = c & (0x7Fu >> len);
  for (size_t k = 1; k < len; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

[[noreturn]] void fail_at(const std::string& file, size_t line, size_t col, const std::string& what,
                          const std::string& hint) {
  throw InputError(file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + what +
                   "; " + hint);
}

// Counts nodes (aliases expanded) and nesting depth from the parser's events.
class SizeCounter final : public YAML::EventHandler {
 public:
  explicit SizeCounter(std::string file) : file_(std::move(file)) {}

  void OnDocumentStart(const YAML::Mark&) override {
    open_.clear();
    anchors_.clear();
    total_ = 0;
    ++documents_;
    doc_events_ = 0;
  }
  // yaml-cpp 0.7 (Debian 12) never gets past a token that cannot start a node (a ','
  // outside '[...]' or '{...}', jbeder/yaml-cpp#1040): it reports a document holding one
  // null at that token, again and again, and YAML::LoadAll grows without end. True when
  // the last document was such a null at the same place as the one before.
  bool stuck() const { return documents_ > 1 && lone_null_ && same_null_; }
  const YAML::Mark& null_mark() const { return null_mark_; }
  size_t documents() const { return documents_; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t a) override {
    const bool first = doc_events_ == 0;
    leaf(m, a);
    lone_null_ = first;
    same_null_ = first && had_null_ && m.pos == null_mark_.pos;
    if (first) {
      had_null_ = true;
      null_mark_ = m;
    }
  }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                const std::string&) override {
    leaf(m, a);
  }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t a) override {
    const auto it = anchors_.find(a);
    // An alias to an anchor still open (a node containing itself) is reported by the
    // loader; here it counts as one node.
    add(m, it == anchors_.end() ? 1 : it->second);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                       YAML::EmitterStyle::value) override {
    open(m, a);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                  YAML::EmitterStyle::value) override {
    open(m, a);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    YAML::anchor_t anchor;
    uint64_t nodes;  // this container and everything in it so far
  };
  void leaf(const YAML::Mark& m, YAML::anchor_t a) {
    if (a) anchors_[a] = 1;
    add(m, 1);
  }
  void add(const YAML::Mark& m, uint64_t nodes) {
    if (doc_events_++ > 0) lone_null_ = false;
    total_ += nodes;
    if (!open_.empty()) open_.back().nodes += nodes;
    if (total_ > kMaxYamlNodes)
      fail_at(file_, size_t(m.line) + 1, size_t(m.column) + 1,
              "the YAML document has more than " + std::to_string(kMaxYamlNodes) +
                  " nodes (aliases counted as the nodes they repeat)",
              "a config needs far fewer; for long per-layer lists give one value for every "
              "layer, and do not nest aliases ('*name') inside anchors that are repeated");
  }
  void open(const YAML::Mark& m, YAML::anchor_t a) {
    if (int(open_.size()) >= kMaxYamlDepth)
      fail_at(file_, size_t(m.line) + 1, size_t(m.column) + 1,
              "the YAML nests deeper than " + std::to_string(kMaxYamlDepth) + " levels",
              "a config nests a few levels (section, entry, value); check for unclosed '[' or "
              "'{'");
    add(m, 1);
    open_.push_back(Open{a, 1});
  }
  void close() {
    if (open_.empty()) return;
    const Open o = open_.back();
    open_.pop_back();
    if (o.anchor) anchors_[o.anchor] = o.nodes;
    if (!open_.empty()) open_.back().nodes += o.nodes - 1;  // the container itself is counted
  }

  std::string file_;
  std::vector<Open> open_;
  std::map<YAML::anchor_t, uint64_t> anchors_;
  uint64_t total_ = 0;
  size_t documents_ = 0, doc_events_ = 0;
  bool lone_null_ = false, same_null_ = false, had_null_ = false;
  YAML::Mark null_mark_;
};

}  // namespace

std::string read_config_text(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw InputError(path + ": cannot read file: " + std::strerror(errno) + "; check the path");
  std::string data;
  char buf[65536];
  size_t got = 0;
  while (data.size() <= kMaxConfigBytes && (got = std::fread(buf, 1, sizeof buf, f.get())) > 0)
    data.append(buf, got);
  if (std::ferror(f.get()))
    throw InputError(path + ": cannot read file: " + std::strerror(errno) + "; check the path");
  return data;
}

void check_config_text(const std::string& file, const std::string& text) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const size_t len = decode(text, i, cp);
    if (len == 0)
      fail_at(file, line, col,
              "not UTF-8 text (byte " + hex_byte(static_cast<unsigned char>(text[i])) + ")",
              "a config is YAML text in UTF-8: save it as UTF-8 (e.g. not Latin-1), or pass "
              "the config file instead of a binary one");
    if (cp == 0xFEFF && i != 0)
      fail_at(file, line, col, "a byte-order mark (U+FEFF) inside the text",
              "a byte-order mark may only open the file: remove this one");
    if (cp == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n'))
      fail_at(file, line, col, "a carriage return without a line feed (CR-only line endings)",
              "save the file with LF (Unix) or CRLF (Windows) line endings");
    if (is_control(cp) && cp != '\t' && cp != '\n' && cp != '\r')
      fail_at(file, line, col, "a control character (" + control_name(cp) + ")",
              cp == 0 ? "a config is text: pass the YAML file, not a binary one"
                      : "a config is printable text: remove it");
    if (cp == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    i += len;
  }
  if (text.size() > kMaxConfigBytes)
    throw InputError(file + ": the file is larger than " + format_bytes(kMaxConfigBytes) +
                     ", the most a config may hold; pass a YAML config (the shipped ones are a "
                     "few KiB)");
}

void check_yaml_size(const std::string& file, const std::string& text) {
  std::istringstream in(text);
  SizeCounter counter(file);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(counter)) {
      if (counter.stuck()) {
        const YAML::Mark& m = counter.null_mark();
        const size_t at = size_t(m.pos);
        const std::string token = at < text.size() ? std::string(1, text[at]) : "";
        fail_at(file, size_t(m.line) + 1, size_t(m.column) + 1,
                "YAML syntax error: unexpected '" + token + "' where a value should start" +
                    (token == "," ? " (',' separates entries only inside [...] or {...})" : ""),
                "remove it, or quote the value that holds it");
      }
      // A config is one document; the loader reports several. Stop counting here.
      if (counter.documents() > 64) break;
    }
  } catch (const YAML::Exception&) {
    // A syntax error: the parse that follows reports it with its own position.
  }
}

std::string control_character(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t len = decode(s, i, cp);
    if (len == 0) return "byte " + hex_byte(static_cast<unsigned char>(s[i])) + " (not UTF-8)";
    if (is_control(cp)) return control_name(cp);
    i += len;
  }
  return "";
}

std::string printable(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t len = decode(s, i, cp);
    if (len == 0 || is_control(cp)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", len == 0 ? unsigned(static_cast<unsigned char>(s[i]))
                                                         : unsigned(cp & 0xFF));
      out += buf;
      i += len == 0 ? 1 : len;
      continue;
    }
    out.append(s, i, len);
    i += len;
  }
  return out;
}

}  // namespace fabricsim::cfg
