#include "models/switch/arbiter.h"

#include <algorithm>

#include "models/core/errors.h"

namespace fabricsim {

namespace {

// First set bit at or after `from` (wrapping) of the words produced by word(k); -1 if none.
template <typename WordFn>
int first_cyclic(int n, int words, int from, WordFn word) {
  if (n == 0) return -1;
  from %= n;
  for (int pass = 0; pass < 2; ++pass) {
    const int start = pass == 0 ? from : 0;
    const int stop = pass == 0 ? n : from;
    for (int k = start >> 6; k < words && (k << 6) < stop; ++k) {
      uint64_t x = word(k);
      if (k == (start >> 6)) x &= ~0ull << (start & 63);
      if (x) {
        const int i = (k << 6) + __builtin_ctzll(x);
        if (i < stop) return i;
        break;
      }
    }
  }
  return -1;
}

}  // namespace

int PortSet::next_cyclic(int from) const {
  const uint64_t* d = w();
  return first_cyclic(n_, nw_, from, [&](int k) { return d[k]; });
}

int PortSet::next_cyclic_masked(const PortSet& mask, int from) const {
  const uint64_t* d = w();
  const uint64_t* m = mask.w();
  return first_cyclic(n_, nw_, from, [&](int k) { return d[k] & m[k]; });
}

namespace {

class ISlip : public Arbiter {
 public:
  ISlip(int inputs, int outputs, int iterations)
      : in_(inputs), out_(outputs), iters_(iterations), grant_ptr_(outputs, 0),
        accept_ptr_(inputs, 0), grants_(inputs, PortSet(outputs)), fin_(inputs), fout_(outputs),
        granted_(inputs) {}

  void match(const std::vector<PortSet>& rows, const std::vector<PortSet>& cols,
             const PortSet& free_in, const PortSet& free_out, std::vector<int>& m) override {
    m.assign(in_, -1);
    // One free input or one free output (common where transfers are long, aggregated): the
    // request-grant-accept below reduces to one search, with the same result and the same
    // pointer moves. A lone input i is granted by every free output it requests (rows[i]
    // & free_out) and accepts the first at or after its accept pointer; a lone output o
    // grants the first free input at or after its grant pointer, which accepts it, the
    // only grant it has. Later iterations find nothing left to match.
    const int lone_in = free_in.only();
    if (lone_in == -1) return;
    if (lone_in >= 0) {
      const int o = rows[lone_in].next_cyclic_masked(free_out, accept_ptr_[lone_in]);
      if (o >= 0) accept(m, lone_in, o);
      return;
    }
    const int lone_out = free_out.only();
    if (lone_out == -1) return;
    if (lone_out >= 0) {
      const int i = cols[lone_out].next_cyclic_masked(free_in, grant_ptr_[lone_out]);
      if (i >= 0) accept(m, i, lone_out);
      return;
    }
    fin_ = free_in;
    fout_ = free_out;
    for (int it = 0; it < iters_; ++it) {
      // Grant: each unmatched output offers itself to one requesting unmatched input.
      granted_.clear();
      fout_.for_each([&](int o) {
        int i = cols[o].next_cyclic_masked(fin_, grant_ptr_[o]);
        if (i < 0) return;
        if (!granted_.test(i)) grants_[i].clear();
        grants_[i].set(o);
        granted_.set(i);
      });
      if (!granted_.any()) break;
      // Accept: each input takes one grant; pointers move only in the first iteration,
      // which is what desynchronises the outputs (the "slip").
      granted_.for_each([&](int i) {
        int o = grants_[i].next_cyclic(accept_ptr_[i]);
        m[i] = o;
        fin_.reset(i);
        fout_.reset(o);
        if (it == 0) {
          accept_ptr_[i] = (o + 1) % out_;
          grant_ptr_[o] = (i + 1) % in_;
        }
      });
    }
  }

 private:
  void accept(std::vector<int>& m, int i, int o) {
    m[i] = o;
    accept_ptr_[i] = (o + 1) % out_;
    grant_ptr_[o] = (i + 1) % in_;
  }
  int in_, out_, iters_;
  std::vector<int> grant_ptr_, accept_ptr_;
  std::vector<PortSet> grants_;
  PortSet fin_, fout_, granted_;
};

class RoundRobin : public Arbiter {
 public:
  RoundRobin(int inputs, int outputs)
      : in_(inputs), out_(outputs), grant_ptr_(outputs, 0), fin_(inputs) {}

  void match(const std::vector<PortSet>& rows, const std::vector<PortSet>& cols,
             const PortSet& free_in, const PortSet& free_out, std::vector<int>& m) override {
    (void)rows;
    m.assign(in_, -1);
    fin_ = free_in;
    // Outputs take turns to choose first, so no output is always served last.
    for (int k = 0; k < out_; ++k) {
      int o = (first_ + k) % out_;
      if (!free_out.test(o)) continue;
      int i = cols[o].next_cyclic_masked(fin_, grant_ptr_[o]);
      if (i < 0) continue;
      m[i] = o;
      fin_.reset(i);
      grant_ptr_[o] = (i + 1) % in_;
    }
    first_ = (first_ + 1) % out_;
  }

 private:
  int in_, out_;
  int first_ = 0;
  std::vector<int> grant_ptr_;
  PortSet fin_;
};

}  // namespace

const std::vector<std::string>& arbiter_names() {
  static const std::vector<std::string> names{"islip", "round_robin"};
  return names;
}

std::unique_ptr<Arbiter> make_arbiter(const std::string& name, int inputs, int outputs,
                                      int iterations) {
  if (name == "islip") return std::make_unique<ISlip>(inputs, outputs, std::max(1, iterations));
  if (name == "round_robin") return std::make_unique<RoundRobin>(inputs, outputs);
  throw InternalError("unknown arbiter '" + name + "' (the config layer validates names)");
}

}  // namespace fabricsim
