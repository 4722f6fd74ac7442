// A named set of plug-ins of one sort (device kinds, switch features, framings, topology
// generators, ...), in registration order. Built-ins are added once at start-up by
// register_builtin_plugins() (fabrics/plugins.cpp); tests and extensions add their own
// the same way. Entries never move once added (pointers to them stay valid).
#pragma once
#include <deque>
#include <string>
#include <vector>

#include "models/core/errors.h"

namespace fabricsim {

template <class Entry>
class Registry {
 public:
  explicit Registry(std::string what) : what_(std::move(what)) {}

  // Adds `e` (its `name` must be new); returns the stored entry.
  const Entry& add(Entry e) {
    if (find(e.name)) throw InternalError(what_ + " '" + e.name + "' is registered twice");
    entries_.push_back(std::move(e));
    return entries_.back();
  }
  // The entry called `name`, or nullptr.
  const Entry* find(const std::string& name) const {
    for (const Entry& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }
  // The entry called `name`; throws InternalError if there is none (a plug-in that names
  // another one that was not registered).
  const Entry& at(const std::string& name) const {
    const Entry* e = find(name);
    if (!e) throw InternalError("no " + what_ + " called '" + name + "' is registered");
    return *e;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Entry& e : entries_) out.push_back(e.name);
    return out;
  }
  const std::deque<Entry>& entries() const { return entries_; }

 private:
  std::string what_;
  std::deque<Entry> entries_;
};

}  // namespace fabricsim
