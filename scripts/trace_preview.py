#!/usr/bin/env python3
"""A static picture of a fabricsim trace for the docs, where ui.perfetto.dev cannot be
reached: writes an HTML page that draws the trace's first rows (op slices per rank and
lane, and the utilisation counters of one device) with the ECharts library the report
vendors; tests/browser/check_report.py --screenshot turns it into a PNG.

    trace_preview.py TRACE.json OUT.html [--until-us T]"""
import json, os, sys

def main():
    if len(sys.argv) < 3:
        print(__doc__); return 2
    src, out = sys.argv[1], sys.argv[2]
    until = float(sys.argv[sys.argv.index("--until-us") + 1]) if "--until-us" in sys.argv else 30.0
    t = json.load(open(src))
    names = {}
    lanes = {}
    slices, counters = [], {}
    for e in t["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "process_name":
            names[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "X" and e["pid"] < 1000000 and float(e["ts"]) < until:
            key = (e["pid"], e["tid"])
            lanes.setdefault(key, len(lanes))
            slices.append([float(e["ts"]), float(e["ts"]) + float(e["dur"]), key, e.get("cat", ""), e["name"]])
        elif e["ph"] == "C" and e["name"] == "utilisation" and float(e["ts"]) < until:
            for k, v in e["args"].items():
                counters.setdefault(names.get(e["pid"], str(e["pid"])) + " " + k, []).append([float(e["ts"]), v])
    order = sorted(lanes)
    rows = ["%s %s" % (names.get(p, p), {0: "send", 1: "recv", 2: "compute"}.get(tid // 10000, "") + " " + str(tid % 10000))
            for p, tid in order]
    idx = {k: i for i, k in enumerate(order)}
    data = [[s[0], s[1], idx[s[2]], s[3], s[4]] for s in slices]
    first_dev = sorted(counters)[:4]
    here = os.path.dirname(os.path.abspath(__file__))
    lib = open(os.path.join(here, "..", "third_party/echarts/node_modules/echarts/dist/echarts.min.js")).read()
    page = """<!doctype html><html><head><meta charset="utf-8"><title>trace preview</title>
<style>body{font-family:sans-serif;margin:8px} #a{width:1400px;height:900px} #b{width:1400px;height:260px}</style></head>
<body><h3>%s: op slices per rank and lane (first %.0f us) and port utilisation counters</h3><div id="a"></div><div id="b"></div>
<script>%s</script><script>
const rows=%s, data=%s, counters=%s;
const colors={send:"#2f6fb0",recv:"#d9822b",compute:"#3f9c4f",delay:"#999",nvls_reduce:"#7b5ea7",nvls_store:"#b23b3b"};
echarts.init(document.getElementById("a"),null,{renderer:"svg"}).setOption({animation:false,
 grid:{left:170,right:20,top:10,bottom:30}, xAxis:{type:"value",name:"us",min:0},
 yAxis:{type:"category",data:rows,inverse:true,axisLabel:{fontSize:8}},
 series:[{type:"custom",renderItem:(p,api)=>{const s=api.coord([api.value(0),api.value(2)]),e=api.coord([api.value(1),api.value(2)]),h=api.size([0,1])[1]*0.7;
   return {type:"rect",shape:{x:s[0],y:s[1]-h/2,width:Math.max(1,e[0]-s[0]),height:h},style:{fill:colors[data[p.dataIndex][3]]||"#555"}};},
   encode:{x:[0,1],y:2},progressive:0,data:data}]});
echarts.init(document.getElementById("b"),null,{renderer:"svg"}).setOption({animation:false,legend:{top:0},
 grid:{left:170,right:20,top:30,bottom:30},xAxis:{type:"value",min:0},yAxis:{type:"value",max:1,name:"utilisation"},
 series:Object.keys(counters).map(k=>({name:k,type:"line",step:"end",symbol:"none",data:counters[k]}))});
document.body.setAttribute("data-rendered","yes");
</script></body></html>""" % (t.get("otherData", {}).get("system", ""), until, lib, json.dumps(rows), json.dumps(data),
                             json.dumps({k: counters[k] for k in first_dev}))
    open(out, "w").write(page)
    return 0

if __name__ == "__main__":
    sys.exit(main())
