//! The register map for software (`OUT/regs/`) and the FuseSoC core
//! (`OUT/exanet.core`) of a generated folder, checked by the tools that
//! read them: `systemrdl-compiler` compiles the SystemRDL, a C compiler the
//! header, `fusesoc` loads the core and runs its Verilator lint target.
//! Each tool check is skipped, saying so, when the tool is absent
//! (scripts/install-tools.sh installs them).

mod common;

use common::{repo, EXE};
use std::process::Command;

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(tool).is_file()))
}

/// `exanet generate` of configs/mesh-4x4x1.toml into a temporary OUT.
fn generated() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let o = Command::new(EXE)
        .arg("generate")
        .arg("--config")
        .arg(repo().join("configs/mesh-4x4x1.toml"))
        .arg("--out")
        .arg(d.path().join("o"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    d
}

#[test]
fn register_map_files_are_written_and_the_rdl_compiles() {
    let d = generated();
    let regs = d.path().join("o/regs");
    for f in [
        "exanet_ni.rdl",
        "exanet_link_status.rdl",
        "exanet_regs.h",
        "exanet_regs.md",
        "exanet_ni.dtsi",
    ] {
        assert!(regs.join(f).is_file(), "{f} not written");
    }
    let md = std::fs::read_to_string(regs.join("exanet_regs.md")).unwrap();
    assert!(md.contains("| 0x0028 | STATUS | yes |"), "{md}");
    assert!(md.contains("At offset 0xF000 of the window"), "{md}");
    assert!(md.contains("| 0x000C | LINK0_CRC_ERRORS | no |"), "{md}");
    let dts = std::fs::read_to_string(regs.join("exanet_ni.dtsi")).unwrap();
    assert!(dts.contains("reg = <0x0 0xa0000000 0x0 0x10000>"), "{dts}");

    let python = Command::new("python3")
        .args(["-c", "import systemrdl"])
        .output();
    if !python.is_ok_and(|o| o.status.success()) {
        eprintln!(
            "SKIPPED the SystemRDL compile: python3 module `systemrdl` (PyPI systemrdl-compiler) \
             is not installed (scripts/install-tools.sh)"
        );
    } else {
        for f in ["exanet_ni.rdl", "exanet_link_status.rdl"] {
            let o = Command::new("python3")
                .arg("-c")
                .arg(
                    "import sys\nfrom systemrdl import RDLCompiler\nc = RDLCompiler()\n\
                     c.compile_file(sys.argv[1])\nroot = c.elaborate()\n\
                     print(sum(1 for _ in root.top.registers()))",
                )
                .arg(regs.join(f))
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{f}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let n: usize = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
            let decl = std::fs::read_to_string(regs.join(f))
                .unwrap()
                .matches(" @ 0x")
                .count();
            assert_eq!(n, decl, "{f}: every register elaborated");
        }
        // A broken map is caught: two registers at one address.
        let bad = d.path().join("bad.rdl");
        let text = std::fs::read_to_string(regs.join("exanet_ni.rdl"))
            .unwrap()
            .replacen("} COORDS @ 0x20;", "} COORDS @ 0x0;", 1);
        std::fs::write(&bad, text).unwrap();
        let o = Command::new("python3")
            .arg("-c")
            .arg("import sys\nfrom systemrdl import RDLCompiler\nc = RDLCompiler()\nc.compile_file(sys.argv[1])\nc.elaborate()")
            .arg(&bad)
            .output()
            .unwrap();
        assert!(!o.status.success(), "overlapping registers were accepted");
    }

    if !on_path("cc") {
        eprintln!("SKIPPED the C header compile: no `cc` on PATH");
        return;
    }
    let c = d.path().join("t.c");
    std::fs::write(
        &c,
        "#include \"exanet_regs.h\"\n_Static_assert(EXANET_NI_ID == 0u, \"ID\");\n\
         _Static_assert((EXANET_NI_STATUS_CQ_NONEMPTY_MASK >> EXANET_NI_STATUS_CQ_NONEMPTY_SHIFT) == 1u, \"bit\");\n\
         _Static_assert(EXANET_LINK_STATUS_OFFSET == 0xF000u, \"link status page\");\n\
         _Static_assert(EXANET_LINK_STATUS_LINK1_RETRANSMISSIONS == 0x50u, \"link 1 retransmissions\");\n\
         _Static_assert(EXANET_LINK_STATUS_LINK1_RX_OVERFLOWS == EXANET_LINK_STATUS_LINK0_RX_OVERFLOWS + EXANET_LINK_STATUS_STRIDE, \"stride\");\n\
         _Static_assert(EXANET_LINK_STATE_UP == 2u, \"state code\");\n\
         static const unsigned long long ls_base = EXANET_LINK_STATUS_BASE;\n\
         int main(void) { return (int)EXANET_NI_REASON_HEADER_ECC - 1 + (int)(ls_base & 0u); }\n",
    )
    .unwrap();
    let o = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Werror", "-fsyntax-only", "-I"])
        .arg(&regs)
        .arg(&c)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn fusesoc_core_loads_and_its_lint_target_passes() {
    let d = generated();
    let out = d.path().join("o");
    let core = std::fs::read_to_string(out.join("exanet.core")).unwrap();
    assert!(core.starts_with("CAPI=2:"));
    assert!(core.contains("constraints/node.xdc"));
    // The core lists exactly the tool inputs generate wrote: every Verilog
    // file (the blocks' modules, the GTH lane adapter, the board-level
    // lint), the waivers and the node XDC, and nothing that is not there.
    let listed = exanet_gen::fusesoc::core_files(&core);
    let mut written = Vec::new();
    for dir in ["rtl", "lint/board"] {
        for e in std::fs::read_dir(out.join(dir)).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".v") || name.ends_with(".vlt") {
                written.push(format!("{dir}/{name}"));
            }
        }
    }
    written.push("constraints/node.xdc".to_string());
    assert!(
        written.iter().any(|f| f == "rtl/exanet_gth_lane.v"),
        "the config's node flow has the GTH lane adapter: {written:?}"
    );
    let mut a = listed.clone();
    a.sort();
    written.sort();
    assert_eq!(
        a, written,
        "the core's files and the generated tool inputs differ"
    );
    for f in &listed {
        assert!(
            out.join(f).is_file(),
            "the core lists {f}, which is not in OUT"
        );
    }
    if !on_path("fusesoc") || !on_path("verilator") {
        eprintln!(
            "SKIPPED the FuseSoC lint: `fusesoc` (PyPI) or `verilator` is not on PATH \
             (scripts/install-tools.sh)"
        );
        return;
    }
    let vlnv = core
        .lines()
        .find_map(|l| l.strip_prefix("name: "))
        .unwrap()
        .to_string();
    let lint_target = |target: &str, work: &str| {
        let work = d.path().join(work);
        std::fs::create_dir_all(&work).unwrap();
        Command::new("fusesoc")
            .arg("--cores-root")
            .arg(&out)
            .args(["run", "--target", target, &vlnv])
            .current_dir(&work)
            .output()
            .unwrap()
    };
    let lint = |work: &str| lint_target("lint", work);
    let o = lint("work");
    assert!(
        o.status.success(),
        "fusesoc lint failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let o = lint_target("lint_board", "work_board");
    assert!(
        o.status.success(),
        "fusesoc lint_board failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // The target really lints the listed files: a broken top fails it.
    let top = core
        .lines()
        .find_map(|l| l.trim().strip_prefix("toplevel: "))
        .unwrap()
        .to_string();
    let file = out.join(format!("rtl/{top}.v"));
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("\nmodule exanet_lint_probe(input wire a); wire unused_b; endmodule\n");
    text = text.replacen("endmodule", "endmodul", 1);
    std::fs::write(&file, text).unwrap();
    let o = lint("work2");
    assert!(
        !o.status.success(),
        "a broken {top}.v passed the lint target"
    );
}
