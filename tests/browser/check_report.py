#!/usr/bin/env python3
"""Opens a fabricsim report in headless Chromium (through chromedriver's WebDriver API,
standard library only) and checks that it rendered: no console errors or exceptions, and
every expected figure (an SVG drawn in it) and table present.

    check_report.py REPORT.html [--figure NAME]... [--table NAME]... [--screenshot PNG]

Exits 0 when every check passes, 1 with the failures listed otherwise, 2 on bad usage or
when chromium/chromedriver are missing."""
import argparse, base64, json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.request

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def call(base, method, path, body=None):
    req = urllib.request.Request(base + path, method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read().decode())["value"]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--figure", action="append", default=[])
    ap.add_argument("--table", action="append", default=[])
    ap.add_argument("--screenshot")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=2000)
    a = ap.parse_args()
    driver = shutil.which("chromedriver")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not driver or not browser:
        print("check_report: chromium and chromium-driver are needed (apt-get install chromium chromium-driver)")
        return 2
    if not os.path.isfile(a.report):
        print("check_report: %s: no such file" % a.report); return 2
    port = free_port()
    profile = tempfile.mkdtemp(prefix="fabricsim_chrome_")
    proc = subprocess.Popen([driver, "--port=%d" % port], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = "http://127.0.0.1:%d" % port
    failures = []
    try:
        for _ in range(100):
            try:
                call(base, "GET", "/status"); break
            except Exception:
                time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": browser, "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--user-data-dir=" + profile,
                "--window-size=%d,%d" % (a.width, a.height)]},
            "goog:loggingPrefs": {"browser": "ALL"}}}}
        sid = call(base, "POST", "/session", caps)["sessionId"]
        s = "/session/" + sid
        try:
            call(base, "POST", s + "/url", {"url": "file://" + os.path.abspath(a.report)})
            rendered = None
            for _ in range(100):
                rendered = call(base, "POST", s + "/execute/sync",
                                {"script": "return document.body.getAttribute('data-rendered');", "args": []})
                if rendered == "yes": break
                time.sleep(0.1)
            if rendered != "yes":
                failures.append("the page did not finish rendering (data-rendered is %r)" % rendered)
            got = call(base, "POST", s + "/execute/sync", {"script": """
                const f = {}; document.querySelectorAll('[data-figure]').forEach(d => {
                  f[d.getAttribute('data-figure')] = d.querySelectorAll('svg path, svg rect, svg text').length; });
                const t = {}; document.querySelectorAll('[data-table]').forEach(x => {
                  t[x.getAttribute('data-table')] = x.querySelectorAll('tbody tr').length; });
                return {figures: f, tables: t};""", "args": []})
            for name in a.figure:
                n = got["figures"].get(name)
                if n is None: failures.append("figure %s is missing" % name)
                elif n < 3: failures.append("figure %s is empty (%d SVG elements)" % (name, n))
            for name in a.table:
                n = got["tables"].get(name)
                if n is None: failures.append("table %s is missing" % name)
                elif n < 1: failures.append("table %s has no rows" % name)
            logs = call(base, "POST", s + "/se/log", {"type": "browser"})
            for e in logs:
                if e.get("level") in ("SEVERE", "ERROR") or "Uncaught" in e.get("message", ""):
                    failures.append("console: " + e.get("message", ""))
            if a.screenshot:
                png = call(base, "GET", s + "/screenshot")
                with open(a.screenshot, "wb") as f: f.write(base64.b64decode(png))
            print("check_report: %d figures (%s), %d tables" % (len(got["figures"]), ", ".join(sorted(got["figures"])), len(got["tables"])))
        finally:
            call(base, "DELETE", s)
    finally:
        proc.terminate(); proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
    for f in failures: print("check_report: FAIL: " + f)
    print("%d passed, %d failed" % (len(a.figure) + len(a.table) + 2 - min(len(failures), len(a.figure) + len(a.table) + 2), len(failures)))
    return 1 if failures else 0

if __name__ == "__main__":
    sys.exit(main())
