//! The `exanet` binary end to end: config errors, overrides, generation,
//! manifest, golden templates, lint, synth and co-simulation.

mod common;

use common::{repo, Run, EXE};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

impl Run {
    fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// Verilator model cache shared with the other tests of the workspace.
fn model_cache() -> PathBuf {
    Path::new(EXE)
        .parent()
        .and_then(Path::parent)
        .expect("binary lives in target/<profile>/")
        .join("exanet-cache")
}

fn exanet(args: &[&str], cwd: &Path) -> Run {
    exanet_with(args, cwd, false)
}

/// `exanet` with `fresh`: no emission cache shared with other processes
/// (`EXANET_EMIT_CACHE`, set by `scripts/test.sh`), so every design is
/// emitted by this run.
fn exanet_with(args: &[&str], cwd: &Path, fresh: bool) -> Run {
    let mut c = Command::new(EXE);
    c.args(args)
        .current_dir(cwd)
        .env("EXANET_CACHE", model_cache());
    if fresh {
        c.env_remove(exanet_hdl::emit::EMIT_CACHE_ENV);
    }
    let o = c.output().expect("running exanet");
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// `exanet <pre> generate --out o` in a new temporary folder, which must
/// succeed.
fn generated(pre: &[&str]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let mut args = pre.to_vec();
    args.extend(["generate", "--out", "o"]);
    let r = exanet(&args, d.path());
    assert_eq!(r.code, 0, "{}", r.all());
    d
}

/// `generated` with the built-in default config.
fn generated_default() -> tempfile::TempDir {
    generated(&[])
}

/// A config error: exit 2, exactly one stderr line starting `error:`.
fn assert_one_line_usage_error(r: &Run) -> String {
    assert_eq!(r.code, 2, "exit code; output:\n{}", r.all());
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "stderr must be one line:\n{}", r.stderr);
    assert!(lines[0].starts_with("error: "), "{}", lines[0]);
    lines[0].to_string()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn tool_missing(tool: &str, arg: &str) -> bool {
    let missing = Command::new(tool).arg(arg).output().is_err();
    if missing {
        println!("ignored: {tool} not installed");
    }
    missing
}

/// Every file under `dir` (relative path → bytes), skipping `skip` folders.
fn tree(dir: &Path, skip: &[&str]) -> BTreeMap<String, Vec<u8>> {
    fn rec(base: &Path, dir: &Path, skip: &[&str], out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if skip.iter().any(|s| rel == *s) {
                continue;
            }
            if p.is_dir() {
                rec(base, &p, skip, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    rec(dir, dir, skip, &mut out);
    out
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn typo_key_names_file_line_column_and_valid_keys() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "x.toml",
        "name = \"t\"\n\n[router]\nvcs_per_clas = 3\n",
    );
    let r = exanet(&["generate", "--config", "x.toml", "--out", "o"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert_eq!(
        line,
        "error: x.toml:4:1: unknown key `vcs_per_clas` in [router]; expected one of classes, vcs_per_class, buffer_flits, dateline, tie_break, vc_select, allocator, alloc_iterations, counter_bits"
    );
    assert!(
        !d.path().join("o").exists(),
        "nothing is generated on error"
    );
}

#[test]
fn wrong_type_names_key_at_the_value() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "x.toml", "[packet]\nflit_bits = \"wide\"\n");
    let r = exanet(&["config", "--config", "x.toml"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert!(
        line.contains("x.toml:2:13: key `packet.flit_bits`: expected an integer, found a string"),
        "{line}"
    );
}

#[test]
fn syntax_error_is_one_line_with_position() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "x.toml", "[router\nclasses = 1\n");
    let r = exanet(&["config", "--config", "x.toml"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert!(line.contains("x.toml:1:8: TOML syntax error"), "{line}");
}

#[test]
fn illegal_values_name_key_value_rule_and_position() {
    let d = tempfile::tempdir().unwrap();
    // A torus with one VC per class deadlocks: rejected at the line that set it.
    write(d.path(), "t.toml", "[router]\nvcs_per_class = 1\n");
    let r = exanet(&["generate", "--config", "t.toml", "--out", "o"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert!(
        line.starts_with("error: t.toml:2:17: router.vcs_per_class = 1: must be >= 2"),
        "{line}"
    );
    assert!(line.contains("torus"), "{line}");

    write(d.path(), "f.toml", "[packet]\nflit_bits = 100\n");
    let r = exanet(&["generate", "--config", "f.toml", "--out", "o"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert_eq!(
        line,
        "error: f.toml:2:13: packet.flit_bits = 100: must be one of 64, 128, 256 (the datapath \
         widths the router is built for)"
    );

    // The same rules through -P name the flag.
    let r = exanet(&["config", "-P", "packet.flit_bits=100"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert_eq!(
        line,
        "error: -P packet.flit_bits=100: packet.flit_bits = 100: must be one of 64, 128, 256 \
         (the datapath widths the router is built for)"
    );
    let r = exanet(&["config", "-P", "router.buffer_flits=17"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert!(
        line.contains("router.buffer_flits = 17: must hold one maximum packet"),
        "{line}"
    );
    assert!(!d.path().join("o").exists());
}

#[test]
fn overrides_apply_and_bad_keys_are_rejected() {
    let d = tempfile::tempdir().unwrap();
    let r = exanet(
        &[
            "config",
            "-P",
            "router.vcs_per_class=4",
            "-P",
            "topology.dims=[4,4,1]",
            "-P",
            "topology.wrap=[true,true,false]",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains("vcs_per_class = 4"), "{}", r.stdout);
    assert!(r.stdout.contains("dims = [4, 4, 1]"), "{}", r.stdout);

    // Derived values follow the overrides: 4x4x1 has 4 network ports + 1 local.
    let r = exanet(
        &[
            "config",
            "--derived",
            "-P",
            "topology.dims=[4,4,1]",
            "-P",
            "topology.wrap=[true,true,false]",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.all());
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["topology"]["network_ports"], 4);
    assert_eq!(v["router"]["topology"]["local_ports"], 1);
    assert_eq!(v["topology"]["nodes"], 16);

    // -P wins over the file.
    write(d.path(), "x.toml", "[router]\nbuffer_flits = 40\n");
    let r = exanet(
        &[
            "config",
            "--config",
            "x.toml",
            "-P",
            "router.buffer_flits=48",
        ],
        d.path(),
    );
    assert!(r.stdout.contains("buffer_flits = 48"), "{}", r.all());

    let r = exanet(&["config", "-P", "router.vcs=4"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert_eq!(
        line,
        "error: -P router.vcs=4: unknown key `vcs` in [router]; expected one of classes, vcs_per_class, buffer_flits, dateline, tie_break, vc_select, allocator, alloc_iterations, counter_bits"
    );
    let r = exanet(
        &["generate", "-P", "routr.classes=1", "--out", "o"],
        d.path(),
    );
    let line = assert_one_line_usage_error(&r);
    assert!(
        line.contains("unknown key `routr` in the top level; expected one of name, topology"),
        "{line}"
    );
}

#[test]
fn shipped_configs_all_elaborate() {
    let dir = repo().join("configs");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("toml") {
            continue;
        }
        let r = exanet(
            &["config", "--derived", "--config", p.to_str().unwrap()],
            &dir,
        );
        assert_eq!(r.code, 0, "{}: {}", p.display(), r.all());
        n += 1;
    }
    assert!(
        n >= 3,
        "expected the default and at least two small configs, found {n}"
    );
}

#[test]
fn generate_is_deterministic_and_manifest_hashes_every_file() {
    let d = tempfile::tempdir().unwrap();
    // Both runs emit every design themselves (no text kept by another
    // process), so a nondeterministic emission cannot hide behind a cache.
    let r1 = exanet_with(&["generate", "--out", "a"], d.path(), true);
    assert_eq!(r1.code, 0, "{}", r1.all());
    let r2 = exanet_with(&["generate", "--out", "b"], d.path(), true);
    assert_eq!(r2.code, 0, "{}", r2.all());
    let a = tree(&d.path().join("a"), &[]);
    let b = tree(&d.path().join("b"), &[]);
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, v) in &a {
        assert!(v == &b[k], "{k} differs between two runs");
    }
    // Regenerating in place changes nothing.
    let r3 = exanet(&["generate", "--out", "a"], d.path());
    assert!(r3.stdout.contains("(0 changed)"), "{}", r3.stdout);

    let m: serde_json::Value = serde_json::from_slice(&a["manifest.json"]).unwrap();
    let files = m["files"].as_array().unwrap();
    let listed: BTreeMap<String, (String, u64)> = files
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                (
                    f["sha256"].as_str().unwrap().to_string(),
                    f["bytes"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    let mut on_disk = a.clone();
    on_disk.remove("manifest.json");
    // The ledger of what exanet wrote (see `output_folder_never_loses_a_users_file`).
    let ledger: serde_json::Value =
        serde_json::from_slice(&on_disk.remove(".exanet-owned.json").expect("a ledger")).unwrap();
    assert_eq!(
        ledger["files"]["manifest.json"].as_str(),
        Some(sha256_hex(&a["manifest.json"]).as_str())
    );
    assert_eq!(
        listed.keys().collect::<Vec<_>>(),
        on_disk.keys().collect::<Vec<_>>(),
        "manifest lists exactly the generated files"
    );
    for (path, bytes) in &on_disk {
        assert_eq!(listed[path].0, sha256_hex(bytes), "sha256 of {path}");
        assert_eq!(listed[path].1, bytes.len() as u64, "size of {path}");
    }
    for want in [
        "rtl/exanet_waivers.vlt",
        "constraints/exanet.xdc",
        "vivado/build.tcl",
    ] {
        assert!(listed.contains_key(want), "{want} missing");
    }
    // Config, derived params, tops (each with its files) and tool versions.
    assert_eq!(m["config"]["name"], "exanest-8x4x4");
    assert_eq!(m["params"]["packet"]["max_packet_flits"], 18);
    let tops = m["tops"].as_array().unwrap();
    let blocks: Vec<&str> = tops.iter().map(|t| t["block"].as_str().unwrap()).collect();
    assert_eq!(
        blocks,
        [
            "arbiter",
            "crc32",
            "secded",
            "fp_add",
            "fp_add",
            "reduce_alu",
            "router",
            "ni",
            "retry_buffer",
            "link_tx",
            "link_rx",
            "link_status",
            "axil_split",
            "pcs66",
            "node"
        ]
    );
    assert_eq!(tops[8]["point"], "words=512");
    // The split of the node's 16-bit AXI4-Lite window, top page (0xF000 =
    // 61440) for link_status.
    assert_eq!(tops[12]["top"], "exanet_axil_split_a16_sf000");
    assert_eq!(tops[12]["point"], "addr_bits=16,split=61440");
    // The 64B/66B PCS of the GTH lanes, at its golden defaults.
    assert_eq!(tops[13]["top"], "exanet_pcs66_sw32");
    // The whole node: one link per network port of the 8x4x4 torus.
    assert_eq!(tops[14]["top"], "exanet_node");
    assert_eq!(
        tops[14]["point"],
        "links=6,width=65,depth=16,sync_stages=2,reset_stages=2"
    );
    // The NI: derived from the config (payload 256 B, the router's 32-flit
    // local VC buffer, VC 0), its top last after its submodules (SECDED
    // header, CRC-8 footer and CRC-32 payload children).
    let ni = &tops[7];
    assert_eq!(
        ni["point"],
        "channels=4,desc_queue_depth=16,pkt_slots=4,mailbox_msg_bytes=64,max_payload_bytes=256,\
         addr_bits=40,windows=8,errq_depth=16,mailbox_depth=16,cq_depth=64,resp_queue_depth=8,\
         read_queue_depth=4,poison_depth=4,ar_communicators=0,ar_queue_depth=8,\
         ar_max_vector_bytes=1048576,torus_dims=8x4x4,trace_depth=32,buffer_flits=32,vc=0,resp_vc=2,vcs_per_class=2,\
         tx_ahead=8"
    );
    let ni_top = ni["top"].as_str().unwrap();
    assert!(ni_top.starts_with("exanet_ni_"), "{ni_top}");
    let ni_files = ni["files"].as_array().unwrap();
    for part in ["header_pack", "footer_pack", "crc32", "header_unpack"] {
        assert!(
            ni_files
                .iter()
                .any(|f| f.as_str().unwrap() == format!("rtl/{ni_top}_{part}.v")),
            "{part} missing from {ni_files:?}"
        );
    }
    assert_eq!(m["params"]["ni"]["ni"]["max_payload_bytes"], 256);
    assert_eq!(m["params"]["ni"]["buffer_flits"], 32);
    assert_eq!(m["params"]["ni"]["tx_ahead"], 8);
    assert_eq!(m["params"]["ni"]["resp_vc"], 2);
    assert_eq!(m["params"]["ni"]["vcs_per_class"], 2);
    // Which generator and config wrote the folder.
    let fp = &m["fingerprint"];
    let generator = fp["generator"].as_str().unwrap();
    let (version, hash) = generator.split_once("+src.").unwrap();
    assert_eq!(version, m["exanet"].as_str().unwrap());
    assert!(
        hash.len() == 64 && hash.chars().all(|c| c.is_ascii_hexdigit()),
        "{generator}"
    );
    assert_eq!(fp["config"].as_str().unwrap().len(), 64);
    assert!(fp["config_file"].is_null(), "{fp}");
    assert_eq!(fp["overrides"], serde_json::json!([]));
    for t in tops {
        let top = t["top"].as_str().unwrap();
        let files: Vec<&str> = t["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        assert_eq!(files.last().copied(), Some(format!("rtl/{top}.v").as_str()));
        for f in files {
            assert!(listed.contains_key(f), "{f} of {top} not listed");
        }
    }
    for tool in ["exanet", "verilator", "yosys"] {
        assert!(m["tools"][tool].is_string(), "tools.{tool}");
    }
    // No timestamps anywhere: no key naming a time or date, no value
    // shaped like one (words are fine: a module may be named
    // `..._slip_timer`, a key `dateline`; the tool versions carry their
    // release dates, which are not of this run).
    fn no_timestamps(v: &serde_json::Value, at: &str) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    let low = k.to_lowercase();
                    assert!(
                        !low.split('_').any(|w| {
                            [
                                "time",
                                "timestamp",
                                "date",
                                "datetime",
                                "mtime",
                                "generated",
                            ]
                            .contains(&w)
                        }),
                        "manifest must not carry timestamps: key `{at}.{k}`"
                    );
                    if at == "manifest" && k == "tools" {
                        continue;
                    }
                    no_timestamps(x, &format!("{at}.{k}"));
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| no_timestamps(x, at)),
            serde_json::Value::String(s) => {
                // dddd-dd-dd or dd:dd:dd anywhere in the value.
                let b = s.as_bytes();
                let shaped = |pat: &[u8]| {
                    b.windows(pat.len()).any(|w| {
                        w.iter().zip(pat).all(|(c, p)| match p {
                            b'd' => c.is_ascii_digit(),
                            p => c == p,
                        })
                    })
                };
                assert!(
                    !shaped(b"dddd-dd-dd") && !shaped(b"dd:dd:dd"),
                    "manifest must not carry timestamps: `{at}` = {s:?}"
                );
            }
            _ => {}
        }
    }
    no_timestamps(&m, "manifest");
}

#[test]
fn regenerate_removes_stale_rtl() {
    let d = generated_default();
    let old = d
        .path()
        .join("o/rtl/exanet_router_x8t_y4t_z4t_l1_zyx_c2v2_b32_f128_m18_entry_parity_flow.v");
    assert!(old.exists());
    let r = exanet(
        &["generate", "--out", "o", "-P", "router.buffer_flits=64"],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(!old.exists(), "stale top left behind");
    assert!(d
        .path()
        .join("o/rtl/exanet_router_x8t_y4t_z4t_l1_zyx_c2v2_b64_f128_m18_entry_parity_flow.v")
        .exists());
    assert!(
        r.stdout
            .contains("removed stale rtl/exanet_router_x8t_y4t_z4t_l1_zyx_c2v2_b32_f128_m18_entry_parity_flow.v"),
        "{}",
        r.stdout
    );
    // lint/synth refuse a folder generated from another config.
    let r = exanet(
        &["lint", "--out", "o", "-P", "router.buffer_flits=32"],
        d.path(),
    );
    let line = assert_one_line_usage_error(&r);
    assert!(line.contains("router.buffer_flits = 64, not 32"), "{line}");
}

/// `generate` replaces or removes only what its ledger says it wrote and
/// nobody edited since; everything else survives, or the command refuses.
#[test]
fn output_folder_never_loses_a_users_file() {
    let d = tempfile::tempdir().unwrap();
    let o = d.path().join("o");
    let g = |extra: &[&str]| {
        let mut args = vec!["generate", "--out", "o"];
        args.extend_from_slice(extra);
        exanet(&args, d.path())
    };
    assert_eq!(g(&[]).code, 0);
    let before = tree(&o, &[]);

    // A second generate of the same config: no --force needed, same bytes.
    let r = g(&[]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains("(0 changed)"), "{}", r.stdout);
    assert_eq!(tree(&o, &[]), before, "a regeneration changed bytes");

    // Foreign files survive a generate that removes stale files of its own.
    write(&o, "rtl/my_hand.v", "module my_hand; endmodule\n");
    write(&o, "rtl/top.sv", "module top; endmodule\n");
    write(&o, "notes.txt", "mine\n");
    let r = g(&["-P", "router.buffer_flits=64"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        r.stdout
            .contains("removed stale rtl/exanet_router_x8t_y4t_z4t_l1_zyx_c2v2_b32_f128_m18_entry_parity_flow.v"),
        "{}",
        r.stdout
    );
    for (f, text) in [
        ("rtl/my_hand.v", "module my_hand; endmodule\n"),
        ("rtl/top.sv", "module top; endmodule\n"),
        ("notes.txt", "mine\n"),
    ] {
        assert_eq!(std::fs::read_to_string(o.join(f)).unwrap(), text, "{f}");
    }
    assert_eq!(g(&[]).code, 0);

    // Edited generated files are refused, named, and left as they are.
    let tcl = o.join("vivado/build.tcl");
    let xdc = o.join("constraints/exanet.xdc");
    let edited_tcl = format!("{}# my edit\n", std::fs::read_to_string(&tcl).unwrap());
    std::fs::write(&tcl, &edited_tcl).unwrap();
    std::fs::write(&xdc, "# my constraints\n").unwrap();
    let manifest = std::fs::read(o.join("manifest.json")).unwrap();
    let mut edited_manifest = manifest.clone();
    edited_manifest.extend_from_slice(b"\n");
    std::fs::write(o.join("manifest.json"), &edited_manifest).unwrap();
    let r = g(&["-P", "router.buffer_flits=64"]);
    let line = assert_one_line_usage_error(&r);
    for f in [
        "vivado/build.tcl (edited since exanet wrote it)",
        "constraints/exanet.xdc (edited since exanet wrote it)",
        "manifest.json (edited since exanet wrote it)",
        "nothing was changed",
        "--force",
    ] {
        assert!(line.contains(f), "{f:?} missing: {line}");
    }
    assert_eq!(std::fs::read_to_string(&tcl).unwrap(), edited_tcl);
    assert_eq!(
        std::fs::read(o.join("manifest.json")).unwrap(),
        edited_manifest
    );

    // --force: the edited files go to a dated backup folder, never deleted,
    // and the generated ones are written again.
    let r = g(&["--force"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        r.stderr.contains("--force: moved vivado/build.tcl to"),
        "{}",
        r.stderr
    );
    let backups: Vec<PathBuf> = std::fs::read_dir(&o)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("backup-")
        })
        .collect();
    assert_eq!(backups.len(), 1, "{backups:?}");
    let b = &backups[0];
    assert_eq!(
        std::fs::read_to_string(b.join("vivado/build.tcl")).unwrap(),
        edited_tcl
    );
    assert_eq!(
        std::fs::read_to_string(b.join("constraints/exanet.xdc")).unwrap(),
        "# my constraints\n"
    );
    assert_eq!(
        std::fs::read(b.join("manifest.json")).unwrap(),
        edited_manifest
    );
    let b_name = b.file_name().unwrap().to_string_lossy().into_owned();
    let after = tree(&o, &[&b_name]);
    for (k, v) in &before {
        assert!(after.get(k) == Some(v), "{k} not restored by --force");
    }
    assert_eq!(
        std::fs::read_to_string(o.join("rtl/my_hand.v")).unwrap(),
        "module my_hand; endmodule\n"
    );

    // A folder no exanet command wrote that is not empty: refused, untouched.
    let u = d.path().join("user");
    std::fs::create_dir_all(&u).unwrap();
    write(&u, "design.v", "x\n");
    let r = exanet(&["generate", "--out", "user"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert!(
        line.contains("is not empty and no exanet command wrote it") && line.contains("design.v"),
        "{line}"
    );
    assert_eq!(tree(&u, &[]).len(), 1, "a refused generate wrote something");
    // With --force it is written, and the user's file stays.
    let r = exanet(&["generate", "--out", "user", "--force"], d.path());
    assert_eq!(r.code, 0, "{}", r.all());
    assert_eq!(std::fs::read_to_string(u.join("design.v")).unwrap(), "x\n");
    assert!(u.join("manifest.json").exists());
}

/// Compare with `tests/golden/NAME`; `EXANET_BLESS=1` rewrites the golden file.
fn golden(name: &str, actual: &[u8]) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("EXANET_BLESS").is_some() {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, actual).unwrap();
        return;
    }
    let want = std::fs::read(&p)
        .unwrap_or_else(|e| panic!("{}: {e} (run with EXANET_BLESS=1 to create)", p.display()));
    if want != actual {
        // The lines that differ, not the whole file.
        let (w, a) = (
            String::from_utf8_lossy(&want),
            String::from_utf8_lossy(actual),
        );
        let (wl, al): (Vec<&str>, Vec<&str>) = (w.lines().collect(), a.lines().collect());
        let mut diff: Vec<String> = wl
            .iter()
            .filter(|l| !al.contains(l))
            .map(|l| format!("- {l}"))
            .chain(
                al.iter()
                    .filter(|l| !wl.contains(l))
                    .map(|l| format!("+ {l}")),
            )
            .take(40)
            .collect();
        if diff.is_empty() {
            diff.push("(same lines, other order or line ends)".into());
        }
        panic!(
            "{name} differs from {} (EXANET_BLESS=1 to accept):\n{}",
            p.display(),
            diff.join("\n")
        );
    }
}

/// The emitted RTL of the default config, pinned: one SHA-256 per file
/// (without its first line, which names the generator build). An
/// unintended change to any module fails here; an intended one is
/// `EXANET_BLESS=1 cargo test -p exanet-gen --test cli rtl_of_the_default`.
#[test]
fn rtl_of_the_default_config_matches_golden_digests() {
    let d = generated_default();
    let mut text = String::new();
    for (rel, bytes) in tree(&d.path().join("o/rtl"), &[]) {
        let body = String::from_utf8(bytes).unwrap();
        if rel.ends_with(".v") {
            let (first, rest) = body.split_once('\n').unwrap();
            assert!(
                first.starts_with("// Generated by exanet "),
                "{rel}: {first}"
            );
            assert!(rest.contains("`default_nettype none\n"), "{rel}");
            assert!(rest.ends_with("`default_nettype wire\n"), "{rel}");
            text += &format!("{} {rel}\n", sha256_hex(rest.as_bytes()));
        } else {
            text += &format!("{} {rel}\n", sha256_hex(body.as_bytes()));
        }
    }
    golden("rtl-default.sha256", text.as_bytes());
}

#[test]
fn xdc_and_tcl_match_golden_files() {
    let d = generated_default();
    golden(
        "exanest-8x4x4.xdc",
        &std::fs::read(d.path().join("o/constraints/exanet.xdc")).unwrap(),
    );
    // The TCL template is pinned by a unit test (fixed tops, since the
    // blocks' module lists change as they grow); here: every generated top
    // and each of its files is in the script, in the manifest's order.
    let tcl = std::fs::read_to_string(d.path().join("o/vivado/build.tcl")).unwrap();
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("o/manifest.json")).unwrap()).unwrap();
    for t in m["tops"].as_array().unwrap() {
        let files: Vec<String> = t["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| format!("    {}\n", f.as_str().unwrap()))
            .collect();
        let block = format!(
            "dict set tops {} {{\n{}}}\n",
            t["top"].as_str().unwrap(),
            files.concat()
        );
        assert!(
            tcl.contains(&block),
            "missing from build.tcl:\n{block}\n---\n{tcl}"
        );
    }
    assert!(tcl.contains("set part xczu9eg-ffvb1156-2-e\n"), "{tcl}");
    let small = repo().join("configs/small-4x2x2.toml");
    let r = exanet(
        &[
            "generate",
            "--config",
            small.to_str().unwrap(),
            "-P",
            "clock.pl_mhz=250",
            "--out",
            "s",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.all());
    // 64-bit flits: no NI (its datapath is 128-bit), and a note says so.
    assert!(
        r.stdout.contains(
            "note: ni: not generated: packet.flit_bits = 64 but the NI's datapath is 128-bit"
        ),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("top exanet_ni_"), "{}", r.stdout);
    golden(
        "small-4x2x2-250mhz.xdc",
        &std::fs::read(d.path().join("s/constraints/exanet.xdc")).unwrap(),
    );
}

#[test]
fn lint_without_manifest_says_to_generate() {
    let d = tempfile::tempdir().unwrap();
    let r = exanet(&["lint", "--out", "nothing"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert!(
        line.contains("run `exanet generate --out nothing` first"),
        "{line}"
    );
}

#[test]
fn generate_then_lint_default_is_clean() {
    if tool_missing("verilator", "--version") {
        return;
    }
    let d = generated_default();
    let r = exanet(&["lint", "--out", "o"], d.path());
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        r.stdout.contains("with warnings") && r.stdout.contains(", 0 with warnings"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("ok    exanet_crc32_"), "{}", r.stdout);
    assert!(r.stdout.contains("ok    exanet_router_"), "{}", r.stdout);
    assert!(r.stdout.contains("ok    exanet_ni_"), "{}", r.stdout);
    // The default torus's node flow (six links over two quads) is written,
    // so its transceiver wiring is linted too.
    assert!(r.stdout.contains("ok    exanet_board_lint"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("lint: 16 top(s), 16 clean, 0 with warnings"),
        "{}",
        r.stdout
    );

    // A warning makes lint fail: an unused, width-mismatched signal in the first top.
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("o/manifest.json")).unwrap()).unwrap();
    let top = m["tops"][0]["top"].as_str().unwrap().to_string();
    let f = d.path().join(format!("o/rtl/{top}.v"));
    let text = std::fs::read_to_string(&f).unwrap();
    let broken = text.replacen(");", ");\n    wire [3:0] exanet_unused_probe = 8'hff;", 1);
    std::fs::write(&f, broken).unwrap();
    let r = exanet(&["lint", "--out", "o"], d.path());
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(r.stdout.contains(&format!("FAIL  {top}")), "{}", r.stdout);
    assert!(r.stdout.contains("%Warning"), "{}", r.stdout);
}

#[test]
fn synth_reports_resources_of_one_block() {
    if tool_missing("yosys", "-V") {
        return;
    }
    let d = generated_default();
    let r = exanet(
        &[
            "synth",
            "--out",
            "o",
            "--block",
            "arbiter",
            "--json",
            "arbiter.json",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.all());
    for col in ["LUT", "FF", "LUTRAM", "BRAM36", "DSP", "exanet_arbiter_"] {
        assert!(r.stdout.contains(col), "{col} missing:\n{}", r.stdout);
    }
    assert!(r.stdout.contains("by Yosys"), "{}", r.stdout);
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("arbiter.json")).unwrap()).unwrap();
    let arb = &v[0];
    assert_eq!(arb["block"], "arbiter");
    // A 7-way round-robin arbiter: grant logic in LUTs, its priority mask
    // in flip-flops, no memories.
    assert!(arb["ff"].as_u64().unwrap() > 0, "{arb}");
    assert!(arb["lut"].as_u64().unwrap() > 0, "{arb}");
    assert_eq!(arb["lutram_cells"], 0, "{arb}");
    assert_eq!(arb["bram36"], 0.0);
    assert_eq!(v.as_array().unwrap().len(), 1, "--block filters");
    // Logic depth of the mapped netlist: the priority mask feeds back through
    // the grant logic, so there is a register → register path of LUTs.
    let rr = &arb["depth"]["reg_to_reg"];
    assert!(rr["lut_levels"].as_u64().unwrap() >= 1, "{arb}");
    assert!(rr["from"].as_str().unwrap().contains("mask"), "{rr}");
    assert!(rr["to"].as_str().unwrap().contains("(FD"), "{rr}");
    assert_eq!(arb["gth"], 0, "a block uses no transceiver");
    assert!(
        r.stdout.contains("budget at 156.25 MHz") && r.stdout.contains("9 LUT levels"),
        "{}",
        r.stdout
    );
    let depth_row = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("exanet_arbiter_"))
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert!(depth_row.ends_with(" ok"), "{}", r.stdout);
    assert!(!r.stdout.contains("over the depth budget"), "{}", r.stdout);
    // Second run: from the cache, same numbers.
    let r2 = exanet(&["synth", "--out", "o", "--block", "arbiter"], d.path());
    assert!(r2.stdout.contains("1 of 1 runs from"), "{}", r2.stdout);
    let row = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("exanet_arbiter_"))
            .map(str::to_string)
    };
    assert_eq!(row(&r.stdout), row(&r2.stdout));
    let r3 = exanet(&["synth", "--out", "o", "--block", "nosuch"], d.path());
    let line = assert_one_line_usage_error(&r3);
    assert!(line.contains("generated blocks: arbiter"), "{line}");
}

/// At 600 MHz the -2 budget is (1.67 - 1.0) / 0.6 = 1 LUT level: the
/// arbiter's grant logic is deeper, and `synth` says so, naming the path.
#[test]
fn synth_flags_a_block_over_the_depth_budget() {
    if tool_missing("yosys", "-V") {
        return;
    }
    let d = generated(&["-P", "clock.pl_mhz=600"]);
    let r = exanet(
        &[
            "-P",
            "clock.pl_mhz=600",
            "synth",
            "--out",
            "o",
            "--block",
            "arbiter",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains("budget at 600 MHz"), "{}", r.stdout);
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("exanet_arbiter_") && l.ends_with("OVER")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("over the depth budget: exanet_arbiter_n7 reg->reg"),
        "{}",
        r.stdout
    );
}

/// `--by-module` on a small structural block: the SECDED top's encoder,
/// decoder and output registers, each with its cells, summing to the total.
#[test]
fn synth_breaks_a_block_down_by_module() {
    if tool_missing("yosys", "-V") {
        return;
    }
    let d = generated_default();
    let r = exanet(
        &[
            "synth",
            "--out",
            "o",
            "--block",
            "secded",
            "--by-module",
            "--json",
            "s.json",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.all());
    for w in [
        "by sub-block",
        "decoder",
        "encoder",
        "total (sum of parts)",
        "flat run of",
    ] {
        assert!(r.stdout.contains(w), "{w} missing:\n{}", r.stdout);
    }
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("s.json")).unwrap()).unwrap();
    let top = &v[0];
    let b = &top["breakdown"];
    let parts = b["parts"].as_array().unwrap();
    let get = |name: &str, col: &str| {
        parts
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no part {name}: {b}"))["res"][col]
            .as_u64()
            .unwrap()
    };
    // 112 data bits in, 112 corrected bits out: the encoder and decoder
    // are logic only, the registers sit in their own sub-blocks.
    assert!(get("decoder", "lut") > get("encoder", "lut"), "{b}");
    assert_eq!(get("decoder", "ff") + get("encoder", "ff"), 0, "{b}");
    assert_eq!(get("corrected_q", "ff"), 112, "{b}");
    let sum: u64 = parts
        .iter()
        .map(|p| p["res"]["lut"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, b["total"]["lut"].as_u64().unwrap());
    // Same registers as the flat run; LUTs within 10 % of it.
    assert_eq!(b["total"]["ff"], top["ff"]);
    let flat = top["lut"].as_u64().unwrap() as f64;
    assert!((sum as f64 - flat).abs() <= 0.1 * flat, "{sum} vs {flat}");
}

/// The composed node's parts follow the config: one NI per local port, per
/// network link a link_tx (with one GTH), a link_rx and two async FIFOs.
#[test]
fn node_parts_follow_the_config() {
    let d = tempfile::tempdir().unwrap();
    for (cfg, links) in [(None, 6u64), (Some("configs/mesh-4x4x1.toml"), 4)] {
        let cfg_path = cfg.map(|c| repo().join(c).display().to_string());
        let mut args: Vec<&str> = vec!["generate", "--out", "o"];
        if let Some(c) = &cfg_path {
            args.extend(["--config", c.as_str()]);
        }
        let g = exanet(&args, d.path());
        assert_eq!(g.code, 0, "{}", g.all());
        let out = d.path().join("o");
        let manifest: exanet_gen::generate::Manifest =
            serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
        let (parts, missing) = exanet_gen::synth::node_parts(&manifest, &out).unwrap();
        assert!(missing.is_empty(), "{missing:?}");
        let count = |n: &str| parts.iter().find(|p| p.name == n).map(|p| (p.count, p.gth));
        assert_eq!(count("ni"), Some((1, 0)));
        assert_eq!(count("router"), Some((1, 0)));
        assert_eq!(count("link_tx"), Some((links, 1)), "{cfg:?}");
        assert_eq!(count("link_rx"), Some((links, 0)));
        assert_eq!(count("async_fifo"), Some((2 * links, 0)));
        assert_eq!(count("link_status"), Some((1, 0)));
        assert_eq!(count("axil_split"), Some((1, 0)));
        assert_eq!(count("retry_buffer"), None, "inside link_tx");
        let af = parts.iter().find(|p| p.name == "async_fifo").unwrap();
        for f in &af.top.files {
            assert!(out.join(f).is_file(), "{f} not written");
        }
        std::fs::remove_dir_all(&out).unwrap();
    }
}

#[test]
fn blocks_are_listed() {
    let d = tempfile::tempdir().unwrap();
    for args in [&["blocks"][..], &["cosim", "--list"][..]] {
        let r = exanet(args, d.path());
        assert_eq!(r.code, 0, "{}", r.all());
        for b in ["fifo", "arbiter", "credit_counter", "crc32", "secded"] {
            assert!(
                r.stdout.lines().any(|l| l.starts_with(b)),
                "{b}:\n{}",
                r.stdout
            );
        }
    }
    let r = exanet(&["cosim", "nosuch"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert!(line.contains("known blocks: fifo"), "{line}");
    let r = exanet(&["cosim", "fifo", "--point", "width=8,bogus=1"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert!(line.contains("bogus"), "{line}");
}

#[test]
fn help_explains_every_subcommand() {
    let d = tempfile::tempdir().unwrap();
    let r = exanet(&["--help"], d.path());
    assert_eq!(r.code, 0);
    for w in [
        "generate",
        "lint",
        "synth",
        "cosim",
        "blocks",
        "config",
        "-P",
        "Exit codes",
    ] {
        assert!(
            r.stdout.contains(w),
            "{w} missing from --help:\n{}",
            r.stdout
        );
    }
    for sub in ["generate", "lint", "synth", "cosim", "config"] {
        let r = exanet(&[sub, "--help"], d.path());
        assert_eq!(r.code, 0);
        assert!(
            r.stdout.contains("Example"),
            "`exanet {sub} --help` has no example"
        );
    }
    let r = exanet(&["generate", "--bogus"], d.path());
    assert_eq!(r.code, 2, "clap usage errors exit 2");
}

/// THE FAILURE TEST: an RTL bug (the CRC-32 miscounts the bytes of a
/// partial last flit) must be caught by `exanet cosim`, with the cycle and a
/// waveform that exists.
#[test]
fn cosim_catches_a_crc32_that_miscounts_bytes() {
    if tool_missing("verilator", "--version") {
        return;
    }
    let d = generated_default();
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("o/manifest.json")).unwrap()).unwrap();
    let crc = m["tops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["block"] == "crc32")
        .expect("a crc32 top");
    let point = crc["point"].as_str().unwrap().to_string();

    // Copy the crc32's files, then break it: a partial last flit of n bytes
    // is taken as n + 1 bytes.
    let copy = d.path().join("broken");
    std::fs::create_dir_all(&copy).unwrap();
    let mut edited = false;
    for f in crc["files"].as_array().unwrap() {
        let rel = f.as_str().unwrap();
        let text = std::fs::read_to_string(d.path().join("o").join(rel)).unwrap();
        let name = Path::new(rel).file_name().unwrap();
        let new = if text.contains("(5'd16 - bytes)") {
            edited = true;
            text.replace("(5'd16 - bytes)", "(5'd15 - bytes)")
        } else {
            text
        };
        std::fs::write(copy.join(name), new).unwrap();
    }
    assert!(edited, "the crc32 RTL has no `(5'd16 - bytes)` to break");

    // The intact RTL passes the same run first (so the failure below is the bug).
    let waves = d.path().join("waves");
    let ok = exanet(
        &[
            "cosim",
            "crc32",
            "--point",
            &point,
            "--rtl",
            "o/rtl",
            "--cycles",
            "100000",
            "--fail-dir",
            waves.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(ok.code, 0, "{}", ok.all());
    assert!(ok.stdout.contains("mismatches=0"), "{}", ok.stdout);
    // A user's file where the waveform would go is never replaced.
    let taken: String = point
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let taken = waves.join(format!("crc32-{taken}-seed1.vcd"));
    std::fs::write(&taken, "mine\n").unwrap();

    let r = exanet(
        &[
            "cosim",
            "crc32",
            "--point",
            &point,
            "--rtl",
            "broken",
            "--cycles",
            "100000",
            "--fail-dir",
            waves.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(r.code, 1, "a mismatch exits 1:\n{}", r.all());
    assert!(r.stdout.contains("MISMATCH crc32"), "{}", r.stdout);
    let field = |name: &str| -> String {
        r.stdout
            .lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix(&format!("{name}:"))
                    .map(|v| v.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no `{name}:` line in:\n{}", r.stdout))
    };
    let cycle: u64 = field("cycle").parse().expect("cycle is a number");
    assert!(cycle < 100_000);
    assert_eq!(field("port"), "crc", "a miscounted flit shows at crc");
    assert_eq!(field("seed"), "1");
    let wave = PathBuf::from(field("waveform"));
    let wave = if wave.is_absolute() {
        wave
    } else {
        d.path().join(wave)
    };
    let meta = std::fs::metadata(&wave).unwrap_or_else(|e| panic!("{}: {e}", wave.display()));
    assert!(meta.len() > 0, "empty waveform");
    let vcd = std::fs::read_to_string(&wave).unwrap();
    assert!(vcd.contains("$enddefinitions"), "not a VCD");
    assert_eq!(std::fs::read_to_string(&taken).unwrap(), "mine\n");
    assert!(
        wave.to_string_lossy().ends_with("-seed1-2.vcd"),
        "{}",
        wave.display()
    );
    assert!(r.stdout.contains("1 failed"), "{}", r.stdout);

    // `--generated` runs the generated files themselves: break them in place.
    let ok = exanet(
        &[
            "cosim",
            "crc32",
            "--generated",
            "--out",
            "o",
            "--cycles",
            "20000",
        ],
        d.path(),
    );
    assert_eq!(ok.code, 0, "{}", ok.all());
    for e in std::fs::read_dir(d.path().join("o/rtl")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if copy.join(&name).exists() {
            std::fs::copy(copy.join(&name), &p).unwrap();
        }
    }
    let r = exanet(
        &[
            "cosim",
            "crc32",
            "--generated",
            "--out",
            "o",
            "--cycles",
            "100000",
            "--fail-dir",
            waves.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        r.stdout.contains("--rtl o/rtl"),
        "rerun names the RTL folder:\n{}",
        r.stdout
    );
    // The edited files are named: the results describe them, not generate's.
    assert!(
        r.stderr
            .contains("differ from what `exanet generate` wrote")
            && r.stderr.contains("(edited since generated)"),
        "{}",
        r.stderr
    );
}

#[test]
fn ni_tx_ahead_is_a_checked_config_key() {
    let d = tempfile::tempdir().unwrap();
    let r = exanet(&["config", "-P", "ni.tx_ahead=12"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert_eq!(
        line,
        "error: -P ni.tx_ahead=12: ni.tx_ahead = 12: must be a power of two in 2..=32 \
         (packets the NI's transmit scheduler may pick ahead of sending; RTL only)"
    );
    write(d.path(), "a.toml", "[ni]\ntx_ahead = 64\n");
    let r = exanet(&["generate", "--config", "a.toml", "--out", "o"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert!(
        line.starts_with("error: a.toml:2:12: ni.tx_ahead = 64: must be a power of two"),
        "{line}"
    );
    assert!(
        !d.path().join("o").exists(),
        "nothing is generated on error"
    );
    let r = exanet(&["config", "-P", "ni.tx_ahaed=4"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert!(
        line.contains("unknown key `tx_ahaed` in [ni]; expected one of tx_ahead"),
        "{line}"
    );
    let r = exanet(&["config", "--derived", "-P", "ni.tx_ahead=2"], d.path());
    assert_eq!(r.code, 0, "{}", r.all());
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["ni"]["tx_ahead"], 2);
}

/// The NI needs two message classes: a config with an NI and
/// `router.classes = 1` is refused naming the key and where it was set,
/// and nothing is generated; `ni.resp_vc` picks the class-1 VC of the
/// NI's responses (0: the first) and is checked against the router's VCs.
#[test]
fn ni_needs_two_classes_and_a_class_1_response_vc() {
    let d = tempfile::tempdir().unwrap();
    let r = exanet(&["config", "-P", "router.classes=1"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert!(
        line.starts_with(
            "error: -P router.classes=1: router.classes = 1: must be 2 with a network interface"
        ),
        "{line}"
    );
    write(d.path(), "one.toml", "[router]\nclasses = 1\n");
    let r = exanet(
        &["generate", "--config", "one.toml", "--out", "o"],
        d.path(),
    );
    let line = assert_one_line_usage_error(&r);
    assert!(
        line.starts_with("error: one.toml:2:11: router.classes = 1: must be 2"),
        "{line}"
    );
    assert!(
        !d.path().join("o").exists(),
        "nothing is generated on error"
    );
    // Without an NI (64-bit flits), one class is still a valid router.
    let r = exanet(
        &[
            "config",
            "-P",
            "router.classes=1",
            "-P",
            "packet.flit_bits=64",
            "-P",
            "router.buffer_flits=36",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.all());
    // The response VC: the first class-1 VC by default, or the one named.
    let derived = |args: &[&str]| -> serde_json::Value {
        let mut a = vec!["config", "--derived"];
        a.extend_from_slice(args);
        let r = exanet(&a, d.path());
        assert_eq!(r.code, 0, "{}", r.all());
        serde_json::from_str(&r.stdout).unwrap()
    };
    let v = derived(&[]);
    assert_eq!(
        (v["ni"]["vc"].as_u64(), v["ni"]["resp_vc"].as_u64()),
        (Some(0), Some(2))
    );
    assert_eq!(v["ni"]["vcs_per_class"], 2);
    let v = derived(&["-P", "router.vcs_per_class=3"]);
    assert_eq!(
        (
            v["ni"]["resp_vc"].as_u64(),
            v["ni"]["vcs_per_class"].as_u64()
        ),
        (Some(3), Some(3))
    );
    let v = derived(&["-P", "ni.resp_vc=3"]);
    assert_eq!(v["ni"]["resp_vc"], 3);
    let r = exanet(&["config", "-P", "ni.resp_vc=1"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert!(
        line.starts_with("error: -P ni.resp_vc=1: ni.resp_vc = 1: must be 0 (the first class-1 VC, router.vcs_per_class = 2) or a class-1 VC in 2..=3"),
        "{line}"
    );
}

/// A non-default read-ahead reaches the NI's point, name and Verilog, and
/// the generated RTL lints clean.
/// The NI top of generated folder `o`: its module name and its point,
/// from the manifest.
fn ni_top(o: &Path) -> (String, String) {
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(o.join("manifest.json")).unwrap()).unwrap();
    let ni = m["tops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["block"] == "ni")
        .expect("an NI top");
    (
        ni["top"].as_str().unwrap().to_string(),
        ni["point"].as_str().unwrap().to_string(),
    )
}

#[test]
fn generate_with_ni_tx_ahead_16_lints_clean() {
    if tool_missing("verilator", "--version") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let r = exanet(
        &["generate", "-P", "ni.tx_ahead=16", "--out", "o"],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.all());
    let (top, point) = ni_top(&d.path().join("o"));
    assert!(top.ends_with("_t16"), "{top}");
    assert!(point.ends_with(",tx_ahead=16"), "{point}");
    let text = std::fs::read_to_string(d.path().join(format!("o/rtl/{top}.v"))).unwrap();
    assert!(text.contains(" mq_mem [0:15];"), "packet queue 16 deep");
    let r = exanet(&["lint", "--out", "o"], d.path());
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains(&format!("ok    {top}")), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("lint: 16 top(s), 16 clean, 0 with warnings"),
        "{}",
        r.stdout
    );
}

/// `ni.ar_communicators` turns the NI's allreduce engine on (0, the
/// default, leaves it out): generated with the NI (its top named
/// `_ar4`, the engine's check child driven), lint clean; values past the
/// hardware rows are refused naming the key.
#[test]
fn generate_with_the_allreduce_engine_lints_clean() {
    let d = tempfile::tempdir().unwrap();
    for (kv, rule) in [
        ("ni.ar_communicators=17", "must be 0..=16"),
        ("ni.ar_queue_depth=0", "must be 1..=64"),
    ] {
        let r = exanet(&["config", "-P", kv], d.path());
        let line = assert_one_line_usage_error(&r);
        let key = kv.split('=').next().unwrap();
        assert!(line.contains(key) && line.contains(rule), "{line}");
    }
    if tool_missing("verilator", "--version") {
        return;
    }
    let r = exanet(
        &[
            "generate",
            "-P",
            "ni.ar_communicators=4",
            "-P",
            "ni.ar_queue_depth=4",
            "--out",
            "o",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.all());
    let (top, point) = ni_top(&d.path().join("o"));
    assert!(top.ends_with("_ar4"), "{top}");
    assert!(
        point.contains("ar_communicators=4,ar_queue_depth=4"),
        "{point}"
    );
    let text = std::fs::read_to_string(d.path().join(format!("o/rtl/{top}.v"))).unwrap();
    assert!(
        text.contains("ar_0_chk") && text.contains("aq_mem [0:3];"),
        "the engine and its 4-deep descriptor queue"
    );
    let r = exanet(&["lint", "--out", "o"], d.path());
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains(&format!("ok    {top}")), "{}", r.stdout);
    assert!(r.stdout.contains(", 0 with warnings"), "{}", r.stdout);
}

/// Rewrite `dir/manifest.json` through `f`.
fn edit_manifest(dir: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let p = dir.join("manifest.json");
    let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    f(&mut m);
    std::fs::write(&p, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// A generated folder is used only while this build and its config would
/// still generate it: lint, synth and cosim --generated refuse it otherwise,
/// naming the manifest and the command that regenerates it.
#[test]
fn stale_output_is_refused_until_regenerated() {
    let d = generated_default();
    // Fresh: past the check (to the block filter, which needs no tool).
    let fresh = |out: &str| {
        let r = exanet(&["synth", "--out", out, "--block", "nosuch"], d.path());
        let line = assert_one_line_usage_error(&r);
        assert!(
            line.contains("no generated top for block `nosuch`"),
            "{line}"
        );
    };
    fresh("o");

    // Written by another generator build.
    edit_manifest(&d.path().join("o"), |m| {
        m["fingerprint"]["generator"] = "0.0.1+src.0123456789abcdef".into();
    });
    for args in [
        &["lint", "--out", "o"][..],
        &["synth", "--out", "o"][..],
        &["cosim", "crc32", "--generated", "--out", "o"][..],
    ] {
        let r = exanet(args, d.path());
        let line = assert_one_line_usage_error(&r);
        assert!(
            line.starts_with(&format!(
                "error: {} is stale: it was written by another exanet build (generator 0.0.1+src.0123456789ab;",
                Path::new("o").join("manifest.json").display()
            )),
            "{args:?}: {line}"
        );
        assert!(
            line.contains("re-run `exanet generate --out o`") && line.contains("--allow-stale"),
            "{args:?}: {line}"
        );
    }
    // --allow-stale: a warning, then the command runs.
    let r = exanet(
        &["synth", "--out", "o", "--block", "nosuch", "--allow-stale"],
        d.path(),
    );
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(
        r.stderr.starts_with("warning: ")
            && r.stderr.contains("is stale")
            && r.stderr.contains("no generated top for block `nosuch`"),
        "{}",
        r.stderr
    );
    // A manifest without fingerprints is not one this exanet wrote.
    edit_manifest(&d.path().join("o"), |m| {
        m.as_object_mut().unwrap().remove("fingerprint");
    });
    let r = exanet(&["synth", "--out", "o"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert!(
        line.contains("not a manifest written by this exanet") && line.contains("fingerprint"),
        "{line}"
    );
    // Regenerating makes it fresh again (the hand-edited manifest is moved
    // to a backup folder: --force).
    assert_eq!(exanet(&["generate", "--out", "o"], d.path()).code, 2);
    assert_eq!(
        exanet(&["generate", "--out", "o", "--force"], d.path()).code,
        0
    );
    fresh("o");

    // The config file changed since generation: named with the key that
    // changed and the exact regenerate command (file and -P kept).
    let cfg = write(d.path(), "my.toml", "[router]\nbuffer_flits = 40\n");
    let r = exanet(
        &[
            "generate",
            "--config",
            "my.toml",
            "-P",
            "ni.tx_ahead=4",
            "--out",
            "c",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.all());
    fresh("c");
    // Simulator-only keys do not shape the hardware: still fresh.
    std::fs::write(&cfg, "[router]\nbuffer_flits = 40\n[traffic]\nrate = 0.3\n").unwrap();
    fresh("c");
    std::fs::write(&cfg, "[router]\nbuffer_flits = 48\n").unwrap();
    let abs = std::fs::canonicalize(&cfg).unwrap();
    for args in [&["lint", "--out", "c"][..], &["synth", "--out", "c"][..]] {
        let r = exanet(args, d.path());
        let line = assert_one_line_usage_error(&r);
        assert!(
            line.contains(&format!(
                "is stale: its config file {} with -P ni.tx_ahead=4 changed since \
                 (now router.buffer_flits = 48, generated with 40)",
                abs.display()
            )),
            "{args:?}: {line}"
        );
        assert!(
            line.contains(&format!(
                "re-run `exanet generate --config {} -P ni.tx_ahead=4 --out c`",
                abs.display()
            )),
            "{line}"
        );
    }
    // The same config given explicitly is compared with the manifest instead.
    let r = exanet(
        &[
            "synth",
            "--out",
            "c",
            "-P",
            "router.buffer_flits=40",
            "-P",
            "ni.tx_ahead=4",
            "--block",
            "nosuch",
        ],
        d.path(),
    );
    let line = assert_one_line_usage_error(&r);
    assert!(
        line.contains("no generated top for block `nosuch`"),
        "{line}"
    );
    // A config file that is gone cannot be checked.
    std::fs::remove_file(&cfg).unwrap();
    let r = exanet(&["synth", "--out", "c"], d.path());
    let line = assert_one_line_usage_error(&r);
    assert!(line.contains("cannot be read again"), "{line}");
    // Restored: fresh.
    std::fs::write(&cfg, "[router]\nbuffer_flits = 40\n").unwrap();
    fresh("c");
}

/// Every row of the hardware-limits table, at both edges, through the CLI:
/// `exanet config` for hardware, `exanet config --simulation` for the
/// simulator. Each refusal names the key and the value (exit 2).
#[test]
fn every_limit_is_enforced_at_both_edges_for_both_targets() {
    use exanet_hdl::limits::{Target, LIMITS};
    let d = tempfile::tempdir().unwrap();
    // Other keys set so that only the key under test decides.
    let context = |key: &str| -> Vec<&str> {
        match key {
            // A mesh: one VC per class is deadlock-free there.
            "topology.dims" => vec!["topology.wrap=[false,false,false]"],
            // 2 classes x 8 VCs: more than a framed link's 3-bit VC field.
            "router.vcs_per_class" => {
                vec!["topology.wrap=[false,false,false]", "link.model=\"ideal\""]
            }
            // 256-bit flits, 8-byte payloads: a 3-flit largest packet.
            "router.buffer_flits" => vec!["packet.flit_bits=256", "packet.max_payload_bytes=8"],
            // 64-bit flits: 36-flit packets, and no NI (so one class is legal).
            "packet.flit_bits" | "router.classes" => {
                vec!["router.buffer_flits=64", "packet.flit_bits=64"]
            }
            _ => vec![],
        }
    };
    let setting = |key: &str, v: u64| -> (String, String) {
        match key {
            "topology.dims" => (
                format!("topology.dims=[{v},4,4]"),
                "topology.dims[0]".into(),
            ),
            _ => (format!("{key}={v}"), key.to_string()),
        }
    };
    for l in LIMITS {
        for (target, allowed) in [
            (Target::Hardware, l.hardware),
            (Target::Simulation, l.simulation),
        ] {
            let (lo, hi) = allowed.edges();
            let mut cases = vec![(lo, true), (hi, true), (hi + 1, false)];
            if lo > 0 {
                cases.push((lo - 1, false));
            }
            for (v, ok) in cases {
                let (set, shown) = setting(l.key, v);
                let mut args = vec!["config"];
                if target == Target::Simulation {
                    args.push("--simulation");
                }
                let ctx = context(l.key);
                for c in ctx.iter().chain(std::iter::once(&set.as_str())) {
                    args.extend(["-P", c]);
                }
                let r = exanet(&args, d.path());
                if ok {
                    assert_eq!(r.code, 0, "{target:?} {set}: {}", r.all());
                } else {
                    let line = assert_one_line_usage_error(&r);
                    assert!(
                        line.contains(&format!("{shown} = {v}: must be")),
                        "{target:?} {set}: {line}"
                    );
                }
            }
        }
    }
}

/// A buffer the RTL cannot build is refused by every hardware command
/// with the key and the rule; the simulator runs it with a note.
#[test]
fn buffer_flits_257_is_refused_for_hardware_and_noted_in_simulation() {
    let d = generated_default();
    let rule = "router.buffer_flits = 257: must be 9..=256 for hardware";
    for args in [
        &["generate", "--out", "n"][..],
        &["lint", "--out", "o"][..],
        &["synth", "--out", "o"][..],
        &["cosim", "router"][..],
    ] {
        let mut a = args.to_vec();
        a.extend(["-P", "router.buffer_flits=257"]);
        let line = assert_one_line_usage_error(&exanet(&a, d.path()));
        assert!(line.contains(rule), "{args:?}: {line}");
    }
    let line = assert_one_line_usage_error(&exanet(
        &["cosim", "router", "--point", "buffer_flits=257"],
        d.path(),
    ));
    assert!(line.contains(rule), "{line}");
    assert!(!d.path().join("n").exists(), "a refused generate wrote");
    let r = exanet(
        &[
            "simulate",
            "-P",
            "router.buffer_flits=257",
            "-P",
            "sim.warmup=0",
            "-P",
            "sim.measure=100",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        r.all()
            .contains("router.buffer_flits = 257: simulated, but the RTL takes 9..=256"),
        "{}",
        r.all()
    );
}

/// `exanet trace decode FILE`: a dump of two nodes' rings printed as
/// per-transaction timelines with the cycles between events; a bad line
/// is a one-line usage error naming it; `ni.trace_depth` outside its
/// limits row is refused naming the key.
#[test]
fn trace_decode_prints_timelines_and_names_a_bad_line() {
    use exanet_sim::ni::trace::{dump_text, Event, EventCode};
    use exanet_sim::packet::header::PacketType;
    let d = tempfile::tempdir().unwrap();
    let ev = |time, code, txid, info, detail| {
        Event {
            time,
            code,
            chan: 0,
            txid,
            info,
            detail,
        }
        .word()
    };
    let w = PacketType::RdmaWrite.code();
    let dump = dump_text(&[
        (
            "n0".into(),
            vec![
                ev(100, EventCode::Doorbell, 5, 0, 0),
                ev(104, EventCode::PktOut, 5, w, 0),
            ],
        ),
        (
            "n1".into(),
            vec![
                ev(131, EventCode::PktIn, 5, w, 0),
                ev(140, EventCode::WriteLanded, 5, 0, 1),
                ev(140, EventCode::CqPosted, 5, 1, 0),
            ],
        ),
    ]);
    let f = write(d.path(), "pair.trace", &dump);
    let r = exanet(&["trace", "decode", f.to_str().unwrap()], d.path());
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        r.stdout
            .contains("transfer txid 5 (0x0005): 5 event(s), 40 cycles"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("[n1]        131     +27     +31  PKT_IN"),
        "{}",
        r.stdout
    );
    let bad = write(d.path(), "bad.trace", &format!("{dump}not-hex\n"));
    let r = exanet(&["trace", "decode", bad.to_str().unwrap()], d.path());
    let e = assert_one_line_usage_error(&r);
    assert!(e.contains("bad.trace: line 9: `not-hex`"), "{e}");
    let r = exanet(&["config", "-P", "ni.trace_depth=12"], d.path());
    let e = assert_one_line_usage_error(&r);
    assert!(e.contains("ni.trace_depth") && e.contains("12"), "{e}");
}
