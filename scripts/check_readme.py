#!/usr/bin/env python3
"""Keeps README.md true: runs every `build/fabricsim` command it shows and checks what it
quotes. In a fresh directory that links build/, configs/, scripts/ and tests/ (so out/
starts empty):

  - every line of a code block that starts with `build/fabricsim` must exit 0;
  - `<!-- check-output: CMD -->` before a fenced block: CMD's stdout (without its
    `# run cost:` and `# results:` lines) must be the block, line for line;
  - `<!-- check-figure: CMD :: REGEX -->`: CMD's stdout must match REGEX (a line).

    scripts/check_readme.py [BUILD_DIR]   (default build)

Prints one line per check and 'N passed, N failed'; exits 1 on any failure."""
import os, re, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def main():
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1].startswith("-")):
        print(__doc__)
        return 0 if sys.argv[1] in ("-h", "--help") else 2
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
    text = open(os.path.join(ROOT, "README.md")).read()
    lines = text.splitlines()
    work = tempfile.mkdtemp(prefix="fabricsim_readme_")
    os.symlink(build, os.path.join(work, "build"))
    for d in ("configs", "scripts", "tests", "third_party"):
        os.symlink(os.path.join(ROOT, d), os.path.join(work, d))
    outputs = {}
    def run(cmd):
        if cmd not in outputs:
            p = subprocess.run(cmd, shell=True, cwd=work, capture_output=True, text=True)
            outputs[cmd] = p
        return outputs[cmd]
    passed, failed = 0, 0
    def result(ok, what):
        nonlocal passed, failed
        print(("ok   " if ok else "FAIL ") + what)
        passed += ok
        failed += not ok
    # Quoted outputs and figures.
    for i, line in enumerate(lines):
        m = re.match(r"<!-- check-output: (.*) -->$", line.strip())
        if m:
            cmd = m.group(1)
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            k = j + 1
            while not lines[k].startswith("```"):
                k += 1
            want = [l.rstrip() for l in lines[j + 1:k]]
            p = run(cmd)
            got = [l.rstrip() for l in p.stdout.splitlines() if not l.startswith(("# run cost:", "# results:"))]
            ok = p.returncode == 0 and got == want
            result(ok, "README.md:%d: output of %s" % (i + 1, cmd))
            if not ok:
                for a, b in zip(want, got):
                    if a != b:
                        print("    README: %s\n    prints: %s" % (a, b)); break
                if len(want) != len(got): print("    %d lines quoted, %d printed" % (len(want), len(got)))
                if p.returncode: print("    exit %d: %s" % (p.returncode, p.stderr.strip()[:300]))
        m = re.match(r"<!-- check-figure: (.*) :: (.*) -->$", line.strip())
        if m:
            cmd, rx = m.group(1), m.group(2)
            p = run(cmd)
            ok = p.returncode == 0 and re.search(rx, p.stdout, re.M) is not None
            result(ok, "README.md:%d: /%s/ in the output of %s" % (i + 1, rx, cmd))
    # Every command shown.
    fence = False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fence = not fence
            continue
        s = line.strip()
        if (fence or line.startswith("    ")) and s.startswith("build/fabricsim "):
            p = run(s)
            result(p.returncode == 0, "README.md:%d: %s exits 0" % (i + 1, s) +
                   ("" if p.returncode == 0 else " (exit %d: %s)" % (p.returncode, p.stderr.strip()[:200])))
    shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
