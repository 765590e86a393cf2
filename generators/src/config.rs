//! The user-facing config: a TOML file read as changes to the built-in
//! default (the ExaNeSt 8x4x4 machine), plus `-P key.path=value` overrides.
//!
//! Reading happens in three steps so every mistake is reported where it was
//! made, in one line:
//! 1. the file is parsed into a tree that remembers the span of every key and
//!    value; each key is checked against the default's keys (a typo names the
//!    file, line, column, the key and the keys its table accepts) and each
//!    value's TOML type against the default's (a string where a number
//!    belongs is reported at the value);
//! 2. the file's values, then each `-P` override, are written over the
//!    default's table (missing keys keep the default's values);
//! 3. the merged table is deserialized into [`Config`] (`deny_unknown_fields`
//!    on every table), which catches out-of-range integers such as `-1`.
//!
//! Value rules (ranges, combinations) are not checked here but in one place,
//! elaboration (`params::elaborate`, reached as `Loaded::elaborate`);
//! [`Loaded::locate`] turns the key named by an elaboration error back into
//! the file position or `-P` flag that set it.

use crate::error::usage;
use anyhow::Result;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use toml::{Spanned, Table, Value};

/// The built-in default config (the ExaNeSt 8x4x4 machine).
pub const DEFAULT_TOML: &str = include_str!("../../configs/exanest-8x4x4.toml");
/// Where [`DEFAULT_TOML`] lives in the repository (for messages).
pub const DEFAULT_PATH: &str = "configs/exanest-8x4x4.toml";

/// One exanet machine: topology, packet format, router, clock, links, FPGA
/// part, network interface.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Name of this configuration (appears in generated file headers).
    pub name: String,
    /// Network shape and routing order.
    pub topology: Topology,
    /// Flit and packet sizes.
    pub packet: Packet,
    /// Router buffering and virtual channels.
    pub router: Router,
    /// Clock of the network logic.
    pub clock: Clock,
    /// Serial links between FPGAs.
    pub link: Link,
    /// Target device.
    pub fpga: Fpga,
    /// Network interface RTL options.
    pub ni: Ni,
    /// Simulated traffic (network simulator only).
    pub traffic: Traffic,
    /// Simulation method (network simulator only).
    pub sim: Sim,
    /// The allreduce workload (network simulator, `traffic.pattern = "allreduce"`).
    pub allreduce: Allreduce,
    /// The job-batch study (network simulator, `traffic.pattern = "jobs"`).
    pub jobs: Jobs,
    /// The QoS mix (network simulator, `traffic.pattern = "qos"`).
    pub qos: Qos,
    /// Assumptions of `exanet reproduce` that no other section holds.
    pub reproduce: Reproduce,
}

/// `[reproduce]` (`exanet reproduce` only)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reproduce {
    /// Memory behind each NI in the node co-simulation, ns (AR to first
    /// beat, last W beat to B), rounded up to PL cycles.
    pub mem_latency_ns: f64,
}

/// `[topology]`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// Routers per dimension, `[x, y, z]`.
    pub dims: Vec<u32>,
    /// Torus (true) or mesh (false) per dimension.
    pub wrap: Vec<bool>,
    /// Routing order, a permutation of `x`, `y`, `z` (first dimension routed first).
    pub dim_order: String,
    /// NI ports per router.
    pub local_ports: u32,
}

/// `[packet]`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Packet {
    /// Datapath flit width in bits.
    pub flit_bits: u32,
    /// Largest payload of one packet, bytes.
    pub max_payload_bytes: u32,
}

/// `[router]`: the router's own keys, defined beside its parameters.
pub use exanet_sim::router::params::RouterKeys as Router;

/// `[clock]`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clock {
    /// Programmable-logic clock, MHz.
    pub pl_mhz: f64,
}

/// `[link]`: the link keys, defined beside the simulator's link parameters.
pub use exanet_sim::network::LinkKeys as Link;

/// `[fpga]`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fpga {
    /// Vivado part name.
    pub part: String,
    /// Board: a built-in name (`zcu102`, `qfdb`) or a board `.toml` file
    /// (see [`crate::board`]); read by `generate` for the node flow.
    pub board: String,
    /// Transceiver of the node flow's links: `"gth"` (raw GTH channel in
    /// 64B/66B gearbox mode behind the project's `pcs66`) or `"aurora"`
    /// (Aurora 64B/66B core in framing mode); see
    /// [`crate::params::Transceiver`].
    pub transceiver: String,
}

/// `[ni]`: the NI RTL's own keys, defined beside its parameters.
pub use exanet_hdl::ni::geometry::NiKeys as Ni;

/// `[traffic]` (network simulator only)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Traffic {
    /// Destination pattern: uniform, transpose, bit_complement, bit_reverse,
    /// tornado, neighbour, hotspot, trace; or a workload: allreduce
    /// (`[allreduce]`), jobs (`[jobs]`), qos (`[qos]`).
    pub pattern: String,
    /// Offered load, flits per terminal per cycle.
    pub rate: f64,
    /// Share of packets to the hotspots (pattern = "hotspot").
    pub hotspot_fraction: f64,
    /// Hotspot node indices.
    pub hotspot_nodes: Vec<u32>,
    /// Trace CSV file (pattern = "trace").
    pub trace: String,
    /// Unit of the trace's time column: "cycles" or "ns".
    pub trace_unit: String,
    /// Payload size distribution: "fixed" or "bimodal".
    pub sizes: String,
    /// Payload bytes (sizes = "fixed").
    pub bytes: u32,
    /// Small payload bytes (sizes = "bimodal").
    pub small_bytes: u32,
    /// Large payload bytes (sizes = "bimodal").
    pub large_bytes: u32,
    /// Probability of a large payload (sizes = "bimodal").
    pub large_fraction: f64,
    /// Share of packets in class 1.
    pub class1_fraction: f64,
}

/// `[sim]` (network simulator only)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sim {
    /// Warm-up cycles.
    pub warmup: u64,
    /// Measurement window, cycles.
    pub measure: u64,
    /// Longest drain after the window, cycles.
    pub drain: u64,
    /// Source queue limit per class, packets (0 = unbounded).
    pub source_queue: u32,
    /// Deadlock watchdog, cycles (0 = off).
    pub watchdog: u64,
    /// Random seed of the traffic.
    pub seed: u64,
}

/// `[allreduce]` (network simulator only, `traffic.pattern = "allreduce"`)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allreduce {
    /// "hardware", "software" or "both".
    pub mode: String,
    /// Reduction: sum, min, max, band, bor, bxor.
    pub op: String,
    /// Element type: i32, u32, i64, u64, f32, f64.
    pub dtype: String,
    /// Elements per vector.
    pub count: u32,
    /// Communicator box origin (x, y, z).
    pub origin: Vec<u32>,
    /// Communicator box extent (x, y, z); 0 = the whole dimension.
    pub extent: Vec<u32>,
    /// Also run boxes of 2, 4, 8, ... ranks up to the box.
    pub scaling: bool,
    /// Collectives measured (each with new inputs).
    pub repetitions: u32,
    /// AR_THRESHOLD, bytes: larger vectors use reduce-scatter + allgather.
    pub threshold: u32,
    /// NI transmit latency, emission to injection, cycles.
    pub ni_tx_cycles: u32,
    /// NI receive latency, tail received to packet consumed, cycles.
    pub ni_rx_cycles: u32,
    /// Memory latency the engine's combining sees, cycles (the RTL
    /// engine's per-chunk cost, `exanet_sim::network::collective`).
    pub mem_latency_cycles: u32,
    /// The engine's step sequencer, cycles per step.
    pub step_cycles: u32,
    /// Software overhead per message posted, µs.
    pub sw_overhead_us: f64,
    /// Software reduction cost per element combined, ns.
    pub sw_reduce_ns_per_element: f64,
    /// Uniform background traffic, flits/terminal/cycle (`[traffic]` sizes).
    pub background_rate: f64,
    /// Longest collective before the run is reported stuck, cycles.
    pub max_cycles: u64,
}

/// `[jobs]` (network simulator only, `traffic.pattern = "jobs"`; see
/// [`crate::jobs`])
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Jobs {
    /// Communication profile: halo, dataflow, allreduce, mixed, file.
    pub profile: String,
    /// Profile file, CSV or JSON (profile = "file").
    pub profile_file: String,
    /// Jobs in the batch.
    pub count: u32,
    /// Ranks of job i = ranks[i mod len] (built-in profiles).
    pub ranks: Vec<u32>,
    /// Iterations of each job.
    pub iterations: u32,
    /// Halo face / data-flow edge / allreduce vector bytes.
    pub bytes: u64,
    /// Compute time per iteration, µs.
    pub compute_us: f64,
    /// Placement policy: linear, random, topology, failure.
    pub placement: String,
    /// λ of the failure-aware cost, hops per byte per certain failure.
    pub failure_weight: f64,
    /// Local-search moves per placement (topology, failure).
    pub search_iterations: u32,
    /// Mean time between failures of every node, s (0 = never fails).
    pub node_mtbf_s: f64,
    /// CSV `node,mtbf_s` of nodes whose MTBF differs from node_mtbf_s.
    pub node_mtbf_file: String,
    /// Time a failed node or cable stays down, s.
    pub repair_s: f64,
    /// Mean time between failures of every cable, s (0 = never fails).
    pub link_mtbf_s: f64,
    /// Dead links for the whole batch, `"node:port"` (port x+, x-, y+, y-, z+, z-).
    pub dead_links: Vec<String>,
    /// Aborts after which a job is given up.
    pub max_attempts: u32,
    /// Running jobs share links (fair share with duty cycles); false = each
    /// job timed as if alone on the machine.
    pub contention: bool,
    /// Queue discipline: fcfs, backfill (EASY).
    pub queue: String,
}

/// `[qos]` (network simulator only, `traffic.pattern = "qos"`)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Qos {
    /// Storage-like stream's offered load, flits per terminal per cycle.
    pub storage_rate: f64,
    /// Storage-like stream's payload bytes per packet.
    pub storage_bytes: u32,
    /// Storage-like stream's class (0 or 1); the MPI-like stream takes the other.
    pub storage_class: u32,
    /// Storage-like stream's destinations (node indices; empty = uniform).
    pub storage_nodes: Vec<u32>,
    /// MPI-like stream's offered load, flits per terminal per cycle.
    pub mpi_rate: f64,
    /// MPI-like stream's payload bytes per packet.
    pub mpi_bytes: u32,
}

impl Default for Traffic {
    fn default() -> Self {
        Config::default().traffic
    }
}

impl Default for Sim {
    fn default() -> Self {
        Config::default().sim
    }
}

impl Default for Config {
    /// The built-in default, [`DEFAULT_TOML`].
    fn default() -> Self {
        // A unit test parses the embedded file; it cannot fail at run time.
        toml::from_str(DEFAULT_TOML).expect("the embedded default config parses")
    }
}

impl Config {
    /// The config as TOML text (every key, in schema order).
    pub fn to_toml(&self) -> Result<String> {
        Ok(toml::to_string(self)?)
    }

    /// Every leaf key (`router.classes`, …) with its value as TOML text.
    pub fn flatten(&self) -> Result<BTreeMap<String, String>> {
        let mut out = BTreeMap::new();
        fn rec(prefix: &str, t: &Table, out: &mut BTreeMap<String, String>) {
            for (k, v) in t {
                let key = join(prefix, k);
                match v {
                    Value::Table(sub) => rec(&key, sub, out),
                    other => {
                        out.insert(key, other.to_string());
                    }
                }
            }
        }
        match Value::try_from(self)? {
            Value::Table(t) => rec("", &t, &mut out),
            _ => anyhow::bail!("config did not serialize to a table"),
        }
        Ok(out)
    }
}

/// Where a key's value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The built-in default.
    Default,
    /// A config file, 1-based line and column of the value.
    File {
        /// The file as the user named it.
        path: String,
        /// Line of the value.
        line: usize,
        /// Column of the value.
        col: usize,
    },
    /// A `-P key=value` flag (its text).
    Override(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => write!(f, "{DEFAULT_PATH} (built-in default)"),
            Origin::File { path, line, col } => write!(f, "{path}:{line}:{col}"),
            Origin::Override(text) => write!(f, "-P {text}"),
        }
    }
}

/// A config and where each of its keys came from.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The effective config.
    pub config: Config,
    /// Origin of every leaf key that was not left at its default.
    pub origins: BTreeMap<String, Origin>,
    /// The config file read, as given.
    pub file: Option<std::path::PathBuf>,
    /// The `-P` overrides applied, in order.
    pub overrides: Vec<String>,
}

impl Loaded {
    /// Where `key` (`router.vcs_per_class`, `topology.dims[2]`) was set.
    pub fn origin(&self, key: &str) -> Origin {
        let base = key.split('[').next().unwrap_or(key);
        self.origins.get(base).cloned().unwrap_or(Origin::Default)
    }

    /// A rule error prefixed with where its key was set; other errors unchanged.
    pub fn locate(&self, e: anyhow::Error) -> anyhow::Error {
        match e.downcast_ref::<exanet_hdl::limits::RuleError>() {
            Some(r) => usage(format!("{}: {r}", self.origin(&r.key))),
            None => e,
        }
    }
}

/// Read the default, the optional file and the overrides into a [`Loaded`].
pub fn load(file: Option<&Path>, overrides: &[String]) -> Result<Loaded> {
    let mut merged: Table = toml::from_str(DEFAULT_TOML)
        .map_err(|e| anyhow::anyhow!("built-in default config: {}", one_line(e.message())))?;
    let default = merged.clone();
    let mut origins = BTreeMap::new();
    if let Some(path) = file {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| usage(format!("cannot read config {shown}: {e}")))?;
        merge_file(&text, &shown, &default, &mut merged, &mut origins)?;
    }
    for text in overrides {
        apply_override(text, &default, &mut merged, &mut origins)?;
    }
    let config: Config = Value::Table(merged)
        .try_into()
        .map_err(|e: toml::de::Error| {
            let (msg, key) = split_key(&e.to_string());
            match key {
                Some(k) => {
                    let at = origins.get(&k).cloned().unwrap_or(Origin::Default);
                    usage(format!("{at}: key `{k}`: {msg}"))
                }
                None => usage(format!("config: {msg}")),
            }
        })?;
    Ok(Loaded {
        config,
        origins,
        file: file.map(Path::to_path_buf),
        overrides: overrides.to_vec(),
    })
}

/// `message\nin `a.b`` → (`message`, Some(`a.b`)).
fn split_key(text: &str) -> (String, Option<String>) {
    let mut msg = Vec::new();
    let mut key = None;
    for line in text.lines() {
        match line.strip_prefix("in `").and_then(|r| r.strip_suffix('`')) {
            Some(k) => key = Some(k.to_string()),
            None => msg.push(line.trim()),
        }
    }
    (msg.join("; "), key)
}

fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn table_name(prefix: &str) -> String {
    if prefix.is_empty() {
        "the top level".to_string()
    } else {
        format!("[{prefix}]")
    }
}

fn keys_of(t: &Table) -> String {
    t.keys().map(String::as_str).collect::<Vec<_>>().join(", ")
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

/// A TOML type, as the user would name it.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a number",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date-time",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

/// `value` where the default holds `expected`: `Ok` if the TOML types agree
/// (an integer is accepted for a number), else the reason.
fn check_kind(expected: &Value, value: &Value) -> std::result::Result<(), String> {
    let ok = match (expected, value) {
        (Value::Float(_), Value::Integer(_) | Value::Float(_)) => true,
        (Value::Array(want), Value::Array(got)) => {
            if let Some(w) = want.first() {
                for (i, g) in got.iter().enumerate() {
                    check_kind(w, g).map_err(|r| format!("element {i}: {r}"))?;
                }
            }
            true
        }
        (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
    };
    if ok {
        Ok(())
    } else {
        let shown = match value {
            Value::Table(_) | Value::Array(_) => String::new(),
            v => format!(" ({v})"),
        };
        Err(format!(
            "expected {}, found {}{shown}",
            kind(expected),
            kind(value)
        ))
    }
}

/// A parsed TOML node that remembers spans (tables) or holds a plain value.
enum Node {
    Table(Vec<(Spanned<String>, Spanned<Node>)>),
    Leaf(Value),
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a TOML value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<Node, E> {
                Ok(Node::Leaf(Value::Boolean(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Node, E> {
                Ok(Node::Leaf(Value::Integer(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Node, E> {
                i64::try_from(v)
                    .map(|v| Node::Leaf(Value::Integer(v)))
                    .map_err(|_| E::custom(format!("integer {v} is out of range")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Node, E> {
                Ok(Node::Leaf(Value::Float(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Node, E> {
                Ok(Node::Leaf(Value::String(v.to_string())))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> std::result::Result<Node, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = s.next_element::<Value>()? {
                    out.push(v);
                }
                Ok(Node::Leaf(Value::Array(out)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> std::result::Result<Node, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = m.next_key::<Spanned<String>>()? {
                    let v = m.next_value::<Spanned<Node>>()?;
                    out.push((k, v));
                }
                Ok(Node::Table(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// Check `text` (the file `shown`) against `default` and write its values
/// into `merged`.
fn merge_file(
    text: &str,
    shown: &str,
    default: &Table,
    merged: &mut Table,
    origins: &mut BTreeMap<String, Origin>,
) -> Result<()> {
    let at = |offset: usize| {
        let (line, col) = line_col(text, offset);
        format!("{shown}:{line}:{col}")
    };
    let root: Node = toml::from_str(text).map_err(|e| {
        let pos = e
            .span()
            .map(|s| at(s.start))
            .unwrap_or_else(|| shown.to_string());
        usage(format!(
            "{pos}: TOML syntax error: {}",
            one_line(e.message())
        ))
    })?;
    let Node::Table(entries) = root else {
        return Err(usage(format!("{shown}: not a TOML table")));
    };
    #[allow(clippy::too_many_arguments)]
    fn walk(
        entries: Vec<(Spanned<String>, Spanned<Node>)>,
        prefix: &str,
        default: &Table,
        merged: &mut Table,
        origins: &mut BTreeMap<String, Origin>,
        text: &str,
        shown: &str,
        at: &dyn Fn(usize) -> String,
    ) -> Result<()> {
        for (k, v) in entries {
            let key_span = k.span();
            let val_span = v.span();
            let k = k.into_inner();
            let path = join(prefix, &k);
            let Some(want) = default.get(&k) else {
                return Err(usage(format!(
                    "{}: unknown key `{k}` in {}; expected one of {}",
                    at(key_span.start),
                    table_name(prefix),
                    keys_of(default)
                )));
            };
            match (want, v.into_inner()) {
                (Value::Table(sub_default), Node::Table(sub)) => {
                    let Some(Value::Table(sub_merged)) = merged.get_mut(&k) else {
                        unreachable!("merged starts as a copy of the default");
                    };
                    walk(
                        sub,
                        &path,
                        sub_default,
                        sub_merged,
                        origins,
                        text,
                        shown,
                        at,
                    )?;
                }
                (Value::Table(sub_default), Node::Leaf(_)) => {
                    return Err(usage(format!(
                        "{}: key `{path}` must be a table ([{path}]) with keys {}",
                        at(key_span.start),
                        keys_of(sub_default)
                    )));
                }
                (_, Node::Table(_)) => {
                    return Err(usage(format!(
                        "{}: key `{path}`: expected {}, found a table",
                        at(val_span.start),
                        kind(want)
                    )));
                }
                (_, Node::Leaf(value)) => {
                    check_kind(want, &value)
                        .map_err(|r| usage(format!("{}: key `{path}`: {r}", at(val_span.start))))?;
                    let (line, col) = line_col(text, val_span.start);
                    origins.insert(
                        path.clone(),
                        Origin::File {
                            path: shown.to_string(),
                            line,
                            col,
                        },
                    );
                    merged.insert(k, value);
                }
            }
        }
        Ok(())
    }
    walk(entries, "", default, merged, origins, text, shown, &at)
}

/// Apply one `-P key.path=value` flag.
fn apply_override(
    text: &str,
    default: &Table,
    merged: &mut Table,
    origins: &mut BTreeMap<String, Origin>,
) -> Result<()> {
    let fail = |msg: String| usage(format!("-P {text}: {msg}"));
    let (path, raw) = text
        .split_once('=')
        .ok_or_else(|| fail("expected key.path=value, e.g. -P router.vcs_per_class=4".into()))?;
    let path = path.trim();
    let raw = raw.trim();
    let parts: Vec<&str> = path.split('.').collect();
    let mut want_t = default;
    let mut got_t = merged;
    let mut prefix = String::new();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let Some(want) = want_t.get(*part) else {
            return Err(fail(format!(
                "unknown key `{part}` in {}; expected one of {}",
                table_name(&prefix),
                keys_of(want_t)
            )));
        };
        let here = join(&prefix, part);
        match (want, last) {
            (Value::Table(sub), false) => {
                want_t = sub;
                let Some(Value::Table(g)) = got_t.get_mut(*part) else {
                    unreachable!("merged starts as a copy of the default");
                };
                got_t = g;
                prefix = here;
            }
            (Value::Table(sub), true) => {
                let keys: Vec<String> = sub.keys().map(|k| join(&here, k)).collect();
                return Err(fail(format!(
                    "`{here}` is a table; set one of its keys: {}",
                    keys.join(", ")
                )));
            }
            (_, false) => {
                return Err(fail(format!("`{here}` is {}, not a table", kind(want))));
            }
            (_, true) => {
                let value = parse_value(raw, want);
                check_kind(want, &value).map_err(|r| fail(format!("key `{here}`: {r}")))?;
                got_t.insert(part.to_string(), value);
                origins.insert(here, Origin::Override(text.to_string()));
            }
        }
    }
    Ok(())
}

/// A `-P` value: TOML if it parses as TOML (and is not a mismatch for a
/// string key), else the text as a string.
fn parse_value(raw: &str, want: &Value) -> Value {
    let parsed = toml::from_str::<Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"));
    match (parsed, want) {
        (Some(v @ Value::String(_)), _) => v,
        (Some(_), Value::String(_)) | (None, _) => Value::String(raw.to_string()),
        (Some(v), _) => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn load_text(text: &str, overrides: &[&str]) -> Result<Loaded> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        load(Some(f.path()), &o)
    }

    fn err(text: &str, overrides: &[&str]) -> String {
        let e = load_text(text, overrides).unwrap_err();
        assert!(crate::error::is_usage(&e), "{e:#}");
        format!("{e:#}")
    }

    #[test]
    fn default_parses_and_matches_exanest() {
        let c = Config::default();
        assert_eq!(c.name, "exanest-8x4x4");
        assert_eq!(c.topology.dims, vec![8, 4, 4]);
        assert_eq!(c.router.vcs_per_class, 2);
        assert_eq!(load(None, &[]).unwrap().config, c);
    }

    #[test]
    fn partial_file_keeps_default_values() {
        let l = load_text("[router]\nbuffer_flits = 40\n", &[]).unwrap();
        assert_eq!(l.config.router.buffer_flits, 40);
        assert_eq!(l.config.router.classes, 2);
        assert_eq!(l.config.topology.dims, vec![8, 4, 4]);
        match l.origin("router.buffer_flits") {
            Origin::File { line, col, .. } => assert_eq!((line, col), (2, 16)),
            o => panic!("{o:?}"),
        }
        assert_eq!(l.origin("router.classes"), Origin::Default);
    }

    #[test]
    fn typo_names_line_column_key_and_alternatives() {
        let e = err("name = \"t\"\n[router]\nvcs_per_clas = 3\n", &[]);
        assert!(e.ends_with(":3:1: unknown key `vcs_per_clas` in [router]; expected one of classes, vcs_per_class, buffer_flits, dateline, tie_break, vc_select, allocator, alloc_iterations, counter_bits"), "{e}");
        let e = err("nam = \"t\"\n", &[]);
        assert!(
            e.contains(":1:1: unknown key `nam` in the top level"),
            "{e}"
        );
        let e = err("[routr]\nclasses = 1\n", &[]);
        assert!(e.contains(":1:2: unknown key `routr`"), "{e}");
    }

    #[test]
    fn wrong_types_are_reported_at_the_value() {
        let e = err("[router]\nclasses = \"two\"\n", &[]);
        assert!(
            e.contains(
                ":2:11: key `router.classes`: expected an integer, found a string (\"two\")"
            ),
            "{e}"
        );
        let e = err("[topology]\ndims = [8, \"4\", 4]\n", &[]);
        assert!(
            e.contains(":2:8: key `topology.dims`: element 1: expected an integer"),
            "{e}"
        );
        let e = err("router = 3\n", &[]);
        assert!(e.contains(":1:1: key `router` must be a table"), "{e}");
        let e = err("[router]\nclasses = -1\n", &[]);
        assert!(e.contains(":2:11: key `router.classes`:"), "{e}");
        assert!(e.contains("-1"), "{e}");
        // an integer is fine where a number is expected
        let l = load_text("[link]\ngbps = 25\n", &[]).unwrap();
        assert_eq!(l.config.link.gbps, 25.0);
    }

    #[test]
    fn syntax_errors_are_one_line() {
        let e = err("[router\nclasses = 1\n", &[]);
        assert!(e.contains(":1:8: TOML syntax error:"), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn overrides_set_and_reject() {
        let l = load(
            None,
            &[
                "router.vcs_per_class=4".into(),
                "topology.dims=[4,4,1]".into(),
                "fpga.part=xczu9eg-ffvb1156-1-i".into(),
                "name=123".into(),
                "clock.pl_mhz=200".into(),
            ],
        )
        .unwrap();
        assert_eq!(l.config.router.vcs_per_class, 4);
        assert_eq!(l.config.topology.dims, vec![4, 4, 1]);
        assert_eq!(l.config.fpga.part, "xczu9eg-ffvb1156-1-i");
        assert_eq!(l.config.name, "123");
        assert_eq!(l.config.clock.pl_mhz, 200.0);
        assert_eq!(
            l.origin("router.vcs_per_class"),
            Origin::Override("router.vcs_per_class=4".into())
        );
        let e = format!("{:#}", load(None, &["router.vcs=4".into()]).unwrap_err());
        assert_eq!(e, "-P router.vcs=4: unknown key `vcs` in [router]; expected one of classes, vcs_per_class, buffer_flits, dateline, tie_break, vc_select, allocator, alloc_iterations, counter_bits");
        let e = format!("{:#}", load(None, &["router=4".into()]).unwrap_err());
        assert!(e.contains("`router` is a table; set one of its keys: router.classes, router.vcs_per_class, router.buffer_flits"), "{e}");
        let e = format!(
            "{:#}",
            load(None, &["router.classes=x".into()]).unwrap_err()
        );
        assert!(
            e.contains("key `router.classes`: expected an integer, found a string"),
            "{e}"
        );
        let e = format!("{:#}", load(None, &["router.classes".into()]).unwrap_err());
        assert!(e.contains("expected key.path=value"), "{e}");
        let e = format!(
            "{:#}",
            load(None, &["router.classes=-2".into()]).unwrap_err()
        );
        assert!(
            e.starts_with("-P router.classes=-2: key `router.classes`:"),
            "{e}"
        );
    }

    #[test]
    fn overrides_win_over_the_file() {
        let l = load_text("[router]\nclasses = 1\n", &["router.classes=2"]).unwrap();
        assert_eq!(l.config.router.classes, 2);
    }

    #[test]
    fn flatten_lists_every_leaf() {
        let f = Config::default().flatten().unwrap();
        assert_eq!(f["router.vcs_per_class"], "2");
        assert_eq!(f["topology.dims"], "[8, 4, 4]");
        assert_eq!(f["traffic.pattern"], "\"uniform\"");
        assert_eq!(f["sim.seed"], "1");
        assert_eq!(f["ni.tx_ahead"], "8");
        assert_eq!(f["ni.resp_vc"], "0");
        assert_eq!(f["router.dateline"], "\"entry\"");
        assert_eq!(f["link.model"], "\"framed\"");
        assert_eq!(f["link.down"], "[]");
        assert_eq!(f["allreduce.count"], "1");
        // + 7 link-layer keys (model, frame_flits, ber, burst_rate, burst_bits, down, down_nodes)
        // + 17 [allreduce] keys + 2 allocator keys (allocator, alloc_iterations)
        assert_eq!(f["router.allocator"], "\"separable\"");
        // + 1 board key (fpga.board)
        assert_eq!(f["fpga.board"], "\"zcu102\"");
        // + 1 transceiver key (fpga.transceiver)
        assert_eq!(f["fpga.transceiver"], "\"gth\"");
        // + 1 [reproduce] key (mem_latency_ns)
        assert_eq!(f["reproduce.mem_latency_ns"], "100.0");
        // + 18 [jobs] keys, + 6 [qos] keys
        assert_eq!(f["jobs.placement"], "\"linear\"");
        assert_eq!(f["qos.storage_class"], "0");
        // + 2 allreduce-engine keys of the NI (ar_communicators, ar_queue_depth)
        assert_eq!(f["ni.ar_communicators"], "0");
        // + 1 event-trace key of the NI (trace_depth)
        assert_eq!(f["ni.trace_depth"], "32");
        // + 1 router key (counter_bits)
        assert_eq!(f["router.counter_bits"], "16");
        assert_eq!(
            f.len(),
            19 + 12 + 6 + 7 + 17 + 2 + 1 + 1 + 1 + 18 + 6 + 2 + 1 + 1
        );
    }

    #[test]
    fn line_col_counts_characters() {
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("é\nx", 3), (2, 1));
        assert_eq!(line_col("abc", 0), (1, 1));
    }
}
