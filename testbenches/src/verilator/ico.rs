//! The input region once a cycle: what the fast shim needs to skip
//! Verilator's "ico" region on an `eval` whose inputs it reads did not
//! change, found in the C++ that Verilator 5.006 generated for one model.
//!
//! Verilator 5's root evaluation (`V<top>___024root___eval`) starts with
//! the *input combinational* region: the logic fed by top-level inputs
//! (`___eval_ico` and the `___ico_sequent__*` functions it calls). Verilator
//! runs it on **every** `eval`, so a co-simulation that evaluates twice a
//! cycle (clock low with new inputs, then clock high) runs it twice, the
//! second time on unchanged inputs. For the router that second run is a
//! quarter of the model's time (BENCHMARKS.md, issue 16 item 4).
//!
//! Skipping it is exact when every input port the region reads holds the
//! value it held at the region's last run: the region is then a function of
//! unchanged values (inputs, and model state that only `eval` writes and
//! that the last `eval` left settled), so running it would rewrite what is
//! already there. The shim therefore keeps a copy of those ports and
//! compares before each `eval`; the clock skips nothing by itself — it is
//! one more port, watched like any other when the region reads it (a
//! design whose logic uses a clock combinationally never skips on that
//! clock's edge). Models with several clocks are covered by the same rule.
//!
//! The plan is refused (the shim falls back to the full `eval`) when the
//! generated code does not have exactly the expected shape: the root
//! `___eval` with Verilator 5.006's input-region loop, a call graph of the
//! region whose every function is found, and no side effect in the region
//! that a repeat run would change (`$random`, `$time`, `$display`,
//! `$finish`, …).

use super::port::{PortDir, PortInfo};
use std::collections::{BTreeMap, BTreeSet};

/// What the shim needs to build the skipping entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IcoPlan {
    /// Body of the root evaluation without the input-region loop: the
    /// shim's `exanet_eval_no_ico`.
    pub body: String,
    /// Root functions that body calls (the shim declares them).
    pub calls: Vec<String>,
    /// Indices into the model's ports of the inputs the region reads.
    pub watched: Vec<usize>,
}

/// Calls, in generated code, that make a region's repeat run differ from
/// its first (random numbers, time, output, simulation control).
const SIDE_EFFECTS: [&str; 8] = [
    "VL_RANDOM",
    "VL_RAND_RESET",
    "VL_TIME",
    "_vm_contextp__",
    "VL_WRITEF",
    "VL_FWRITEF",
    "VL_FINISH",
    "VL_STOP",
];

/// Every function of the model defined in `files` (`(file name, text)` of
/// the generated C++): `V<top>…` names of every class (the root's
/// `V<top>___024root___NAME`, and those of modules Verilator kept apart,
/// such as each router of a network, `V<top>_<module>___NAME`), with their
/// body lines.
fn functions(top: &str, files: &[(String, String)]) -> BTreeMap<String, Vec<String>> {
    let prefix = format!("V{top}");
    let mut out = BTreeMap::new();
    for (_, text) in files {
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line.starts_with(char::is_whitespace) || !line.ends_with('{') {
                continue;
            }
            let head = line
                .trim_start_matches("VL_INLINE_OPT ")
                .trim_start_matches("VL_ATTR_COLD ");
            let Some(rest) = head.strip_prefix("void ") else {
                continue;
            };
            if !rest.starts_with(&prefix) {
                continue;
            }
            let Some(name) = rest.split('(').next() else {
                continue;
            };
            let mut body = Vec::new();
            for l in lines.by_ref() {
                if l == "}" {
                    break;
                }
                body.push(l.to_string());
            }
            out.insert(name.to_string(), body);
        }
    }
    out
}

/// Full names of the model's functions called in `text`: every
/// identifier `V<top>…` followed by `(`.
fn calls_in(top: &str, text: &str) -> BTreeSet<String> {
    let prefix = format!("V{top}");
    let mut out = BTreeSet::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(&prefix) {
        let start = from + i;
        let rest = &text[start..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let before = text[..start].chars().next_back();
        if rest[end..].starts_with('(')
            && !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            out.insert(rest[..end].to_string());
        }
        from = start + end.max(1);
    }
    out
}

/// Whether `text` names member `name` (`->name` or `.name` not followed by
/// more of an identifier).
fn reads_member(text: &str, name: &str) -> bool {
    for sep in ["->", "."] {
        let pat = format!("{sep}{name}");
        let mut from = 0;
        while let Some(i) = text[from..].find(&pat) {
            let end = from + i + pat.len();
            let next = text[end..].chars().next();
            if !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                return true;
            }
            from = end;
        }
    }
    false
}

/// The skip plan for model `top` from its generated C++ `files` (the
/// `V<top>___024root__DepSet_*.cpp` files; others are ignored), or why
/// there is none.
pub(crate) fn plan(
    top: &str,
    files: &[(String, String)],
    ports: &[PortInfo],
) -> Result<IcoPlan, String> {
    let files: Vec<(String, String)> = files
        .iter()
        .filter(|(n, _)| n.starts_with(&format!("V{top}")) && n.contains("__DepSet_"))
        .cloned()
        .collect();
    let funcs = functions(top, &files);
    let root = |name: &str| format!("V{top}___024root___{name}");
    let eval = funcs
        .get(&root("eval"))
        .ok_or("no root `___eval` function in the generated code")?;
    // The input-region loop, exactly as Verilator 5.006 writes it.
    let start = eval
        .iter()
        .position(|l| l == "    vlSelf->__VicoIterCount = 0U;")
        .ok_or("the root `___eval` has no input-region loop")?;
    if eval.get(start + 1).map(String::as_str) != Some("    __VicoContinue = 1U;")
        || eval.get(start + 2).map(String::as_str) != Some("    while (__VicoContinue) {")
    {
        return Err("the input-region loop is not Verilator 5.006's".into());
    }
    let end = start
        + 2
        + eval[start + 2..]
            .iter()
            .position(|l| l == "    }")
            .ok_or("the input-region loop does not end")?;
    let block = eval[start..=end].join("\n");
    let block_calls = calls_in(top, &block);
    let expected: BTreeSet<String> = ["eval_triggers__ico", "dump_triggers__ico", "eval_ico"]
        .into_iter()
        .map(root)
        .collect();
    if block_calls != expected || block.matches("___eval_ico(vlSelf);").count() != 1 {
        return Err(format!(
            "the input-region loop calls {block_calls:?}, not {expected:?}"
        ));
    }
    let decl = "    CData/*0:0*/ __VicoContinue;";
    let mut body = Vec::new();
    for (i, l) in eval.iter().enumerate() {
        if (start..=end).contains(&i) || l == decl {
            continue;
        }
        let names_ico = calls_in(top, l)
            .iter()
            .any(|c| c.strip_prefix(&root("")).is_some_and(|n| n.contains("ico")));
        if l.contains("__Vico") || names_ico {
            return Err(format!(
                "the root `___eval` names the input region outside its loop: `{}`",
                l.trim()
            ));
        }
        body.push(l.as_str());
    }
    let body = body.join("\n");
    let root_prefix = root("");

    let mut calls = Vec::new();
    for c in calls_in(top, &body) {
        if !funcs.contains_key(&c) {
            return Err(format!("`{c}`, called by `___eval`, is not defined"));
        }
        let Some(name) = c.strip_prefix(&root_prefix) else {
            return Err(format!("`___eval` calls `{c}`, not a root function"));
        };
        calls.push(name.to_string());
    }
    // Everything the region runs: `___eval_ico` and what it calls, in
    // the root and in every module class.
    let mut seen = BTreeSet::new();
    let mut todo = vec![root("eval_ico")];
    let mut region = String::new();
    while let Some(f) = todo.pop() {
        if !seen.insert(f.clone()) {
            continue;
        }
        let lines = funcs
            .get(&f)
            .ok_or_else(|| format!("`{f}`, run by the input region, is not defined"))?;
        let text = lines.join("\n");
        todo.extend(calls_in(top, &text));
        region.push_str(&text);
        region.push('\n');
    }
    if let Some(s) = SIDE_EFFECTS.iter().find(|s| region.contains(*s)) {
        return Err(format!("the input region calls `{s}`"));
    }
    let watched = ports
        .iter()
        .enumerate()
        .filter(|(_, p)| p.dir != PortDir::Out && reads_member(&region, &p.name))
        .map(|(i, _)| i)
        .collect();
    Ok(IcoPlan {
        body,
        calls,
        watched,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(name: &str, width: u32, dir: PortDir) -> PortInfo {
        PortInfo {
            name: name.into(),
            width,
            dir,
        }
    }

    /// The shape of Verilator 5.006's output for a model `t` with inputs
    /// `clock`, `a`, `clock_b` and output `q`, where the region reads `a`
    /// (and `extra` lines, to vary it).
    fn generated(eval_ico_extra: &str) -> Vec<(String, String)> {
        let eval = "\
void Vt___024root___eval(Vt___024root* vlSelf) {
    // Init
    CData/*0:0*/ __VicoContinue;
    IData/*31:0*/ __VnbaIterCount;
    // Body
    vlSelf->__VicoIterCount = 0U;
    __VicoContinue = 1U;
    while (__VicoContinue) {
        __VicoContinue = 0U;
        Vt___024root___eval_triggers__ico(vlSelf);
        if (vlSelf->__VicoTriggered.any()) {
            __VicoContinue = 1U;
            if (VL_UNLIKELY((0x64U < vlSelf->__VicoIterCount))) {
#ifdef VL_DEBUG
                Vt___024root___dump_triggers__ico(vlSelf);
#endif
                VL_FATAL_MT(\"t.v\", 1, \"\", \"Input combinational region did not converge.\");
            }
            vlSelf->__VicoIterCount = ((IData)(1U) + vlSelf->__VicoIterCount);
            Vt___024root___eval_ico(vlSelf);
        }
    }
    __VnbaIterCount = 0U;
    Vt___024root___eval_nba(vlSelf);
}
";
        let ico = format!(
            "VL_INLINE_OPT void Vt___024root___ico_sequent__TOP__0(Vt___024root* vlSelf) {{
    vlSelf->t__DOT__x = vlSelf->a & vlSelf->t__DOT__clock_bx;
{eval_ico_extra}
}}

void Vt___024root___eval_ico(Vt___024root* vlSelf) {{
    if (vlSelf->__VicoTriggered.at(0U)) {{
        Vt___024root___ico_sequent__TOP__0(vlSelf);
    }}
}}

void Vt___024root___eval_nba(Vt___024root* vlSelf) {{
    vlSelf->q = vlSelf->t__DOT__x;
}}
"
        );
        vec![
            ("Vt___024root__DepSet_h1__0.cpp".into(), ico),
            ("Vt___024root__DepSet_h2__0.cpp".into(), eval.into()),
            (
                "Vt.cpp".into(),
                "void Vt___024root___eval_ico() {}\n".into(),
            ),
        ]
    }

    fn ports() -> Vec<PortInfo> {
        vec![
            port("clock", 1, PortDir::In),
            port("a", 8, PortDir::In),
            port("clock_b", 1, PortDir::In),
            port("q", 8, PortDir::Out),
        ]
    }

    #[test]
    fn plan_watches_the_inputs_the_region_reads() {
        let p = plan("t", &generated(""), &ports()).unwrap();
        // `a` only: `clock` is not read, and `t__DOT__clock_bx` is not `clock_b`.
        assert_eq!(p.watched, vec![1]);
        assert_eq!(p.calls, vec!["eval_nba".to_string()]);
        assert!(!p.body.contains("Vico"), "{}", p.body);
        assert!(!p.body.contains("___eval_ico"), "{}", p.body);
        assert!(p.body.contains("Vt___024root___eval_nba(vlSelf);"));
        // A region that reads the clock watches it.
        let p = plan("t", &generated("    vlSelf->y = vlSelf->clock;"), &ports()).unwrap();
        assert_eq!(p.watched, vec![0, 1]);
        let p = plan(
            "t",
            &generated("    vlSymsp->TOP.z = vlSymsp->TOP.clock_b;"),
            &ports(),
        )
        .unwrap();
        assert_eq!(p.watched, vec![1, 2]);
        // A module Verilator kept apart (each router of a network): its
        // functions are part of the region, and read the top's ports
        // through `vlSymsp->TOP`.
        let mut g = generated("    Vt_sub___ico_sequent__TOP__t__u0__0((&vlSymsp->TOP__t__u0));");
        g.push((
            "Vt_sub__DepSet_h3__0.cpp".into(),
            "VL_INLINE_OPT void Vt_sub___ico_sequent__TOP__t__u0__0(Vt_sub* vlSelf) {\n    vlSelf->x = vlSymsp->TOP.clock_b;\n}\n".into(),
        ));
        let p = plan("t", &g, &ports()).unwrap();
        assert_eq!(p.watched, vec![1, 2]);
        // ... and when one of them is not found, there is no plan.
        g.pop();
        let e = plan("t", &g, &ports()).unwrap_err();
        assert!(e.contains("Vt_sub___ico_sequent"), "{e}");
    }

    #[test]
    fn plan_is_refused_for_other_shapes() {
        let refused = |files: Vec<(String, String)>| plan("t", &files, &ports()).unwrap_err();
        // A region with a side effect.
        let e = refused(generated("    VL_WRITEF(\"%d\\n\", 8, vlSelf->a);"));
        assert!(e.contains("VL_WRITEF"), "{e}");
        // A region calling a function the files do not define.
        let e = refused(generated("    Vt___024root___helper(vlSelf);"));
        assert!(e.contains("___helper"), "{e}");
        let e = refused(generated("    Vt_other___f(vlSelf);"));
        assert!(e.contains("Vt_other___f"), "{e}");
        // No input region (a model with no logic fed by inputs).
        let mut g = generated("");
        g[1].1 = g[1]
            .1
            .replace("__VicoIterCount = 0U;", "__VicoIterCount = 1U;");
        assert!(refused(g).contains("no input-region loop"));
        // A later Verilator's loop (`___eval_phase__ico`).
        let mut g = generated("");
        g[1].1 = g[1].1.replace(
            "    while (__VicoContinue) {",
            "    while (Vt___024root___eval_phase__ico(vlSelf)) {",
        );
        assert!(refused(g).contains("not Verilator 5.006's"));
        // The region named again after its loop.
        let mut g = generated("");
        g[1].1 = g[1].1.replace(
            "    __VnbaIterCount = 0U;",
            "    __VnbaIterCount = 0U;\n    Vt___024root___eval_ico(vlSelf);",
        );
        assert!(refused(g).contains("outside its loop"));
        // No root eval at all (Verilator 4).
        assert!(refused(vec![]).contains("no root"));
    }
}
