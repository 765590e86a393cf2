//! Logic depth of a mapped netlist: LUT levels on the worst path, read
//! from the JSON netlist Yosys writes after `synth_xilinx` (`write_json`).
//!
//! The walk is exact over the netlist Yosys mapped (no guess): every cell is
//! classified by its Xilinx primitive type, and the longest path is taken
//! over the combinational cells in topological order (Kahn's algorithm; a
//! structural loop is cut at one of its cells and reported in
//! [`Depth::loop_cuts`]).
//!
//! How each primitive counts:
//! - `LUT1`..`LUT6`, `INV`: one LUT level (Yosys leaves some inverters as
//!   `INV`; Vivado makes them a LUT1 or folds them into a neighbour, so
//!   counting one level is the pessimistic reading).
//! - `CARRY4`/`CARRY8`: zero LUT levels, counted separately as carry cells
//!   on the path (a carry chain is a fast dedicated route; its delay goes
//!   into the estimate as [`Budget::carry_ns`] per cell). Bit `i`'s outputs
//!   (`O[i]`, `CO[i]`) depend on `S[0..=i]`, `DI[0..=i]` and the carry-in
//!   pins, as in the primitive; a chain of cells counts one per cell.
//! - `MUXF7`/`MUXF8`/`MUXF9`: zero LUT levels, counted separately (the
//!   slice's wide-function muxes right after the LUTs), [`Budget::mux_ns`].
//! - LUT-RAM and SRL (`RAM32M16`, `RAM64X1D`, `SRLC32E`, …): the read is
//!   combinational from the address pins (`A*`, `ADDR*`, `DPRA*`) to the
//!   data outputs, one LUT level; data, write-enable and write-address pins
//!   are register endpoints (written on the clock edge); `SRLC32E.Q31` is a
//!   register output.
//! - `FD*`, `RAMB*`, `FIFO*`, `DSP48*` and any other type: registers (their
//!   outputs start a path, their inputs end one; a DSP48E2 is taken as fully
//!   registered, which is how the project's blocks would use one). Types
//!   treated this way that are not known registers are listed in
//!   [`Depth::opaque`] so a reader can see the assumption was made.
//! - Clock pins (`C`, `*CLK*`) are not endpoints.
//!
//! Paths are ranked by LUT levels, then carry cells, then wide muxes.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One bit in a Yosys JSON netlist: a net number or a constant (`"0"`, `"1"`, `"x"`, `"z"`).
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Bit {
    /// Net number.
    Net(u64),
    /// Constant.
    Const(String),
}

/// A Yosys JSON netlist (`write_json`), the parts the walk reads.
#[derive(Debug, Deserialize)]
pub struct JsonDesign {
    /// Modules by name.
    pub modules: BTreeMap<String, JsonModule>,
}

/// One module of a JSON netlist.
#[derive(Debug, Deserialize)]
pub struct JsonModule {
    /// Ports by name.
    #[serde(default)]
    pub ports: BTreeMap<String, JsonPort>,
    /// Cells by name.
    #[serde(default)]
    pub cells: BTreeMap<String, JsonCell>,
    /// Named nets.
    #[serde(default)]
    pub netnames: BTreeMap<String, JsonNet>,
}

/// A module port.
#[derive(Debug, Deserialize)]
pub struct JsonPort {
    /// `input`, `output` or `inout`.
    pub direction: String,
    /// Its bits, LSB first.
    pub bits: Vec<Bit>,
}

/// A cell instance.
#[derive(Debug, Deserialize)]
pub struct JsonCell {
    /// Primitive (or module) type.
    #[serde(rename = "type")]
    pub ty: String,
    /// Direction of each port (`input`/`output`).
    #[serde(default)]
    pub port_directions: BTreeMap<String, String>,
    /// Bits on each port.
    #[serde(default)]
    pub connections: BTreeMap<String, Vec<Bit>>,
}

/// A named net.
#[derive(Debug, Deserialize)]
pub struct JsonNet {
    /// 1 for an internal (`$`-prefixed) name.
    #[serde(default)]
    pub hide_name: u8,
    /// Its bits, LSB first.
    pub bits: Vec<Bit>,
}

/// The worst path of one kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Path {
    /// LUT levels (LUTs, INVs and LUT-RAM reads on the path).
    pub lut_levels: u32,
    /// Carry cells on the path.
    pub carry_cells: u32,
    /// MUXF7/8/9 on the path.
    pub wide_muxes: u32,
    /// Start: the register's output net (or `input port[bit]`).
    pub from: String,
    /// End: the register's output net and the pin (or `output port[bit]`).
    pub to: String,
    /// The cells on the path, start to end, as `TYPE net`.
    pub through: Vec<String>,
}

/// Logic depth of one mapped top.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Depth {
    /// Worst register → register path.
    pub reg_to_reg: Option<Path>,
    /// Worst top input → register path.
    pub in_to_reg: Option<Path>,
    /// Worst register → top output path.
    pub reg_to_out: Option<Path>,
    /// Worst top input → top output path (purely combinational through the block).
    pub in_to_out: Option<Path>,
    /// Cell types taken as registers that are not known registers, with counts.
    pub opaque: BTreeMap<String, u64>,
    /// Structural combinational loops in the mapped netlist: when the walk
    /// finds no cell left whose inputs are all resolved, it takes the first
    /// unresolved cell anyway (named here) and ignores its unresolved
    /// inputs. That cell is on a loop or downstream of one, so a top with
    /// cuts may read low on paths through them. Yosys's mapping can build one that is not a functional
    /// loop: in `fp_add`, ABC feeds the operand-swap comparator's carry out
    /// back into its own sum input through `x ^ y`, which does not depend on
    /// the swap. Vivado, synthesizing on its own, need not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loop_cuts: Vec<String>,
}

impl Depth {
    /// The worst LUT levels over the four kinds of path.
    pub fn worst_levels(&self) -> u32 {
        [
            &self.reg_to_reg,
            &self.in_to_reg,
            &self.reg_to_out,
            &self.in_to_out,
        ]
        .iter()
        .filter_map(|p| p.as_ref().map(|p| p.lut_levels))
        .max()
        .unwrap_or(0)
    }
}

/// The delay model behind the depth budget of a clock.
///
/// Xilinx's DS925 (Zynq UltraScale+ DC and AC switching characteristics)
/// gives clocking, I/O and block FMAX figures but no CLB LUT or routing
/// delay: Vivado's timing model holds those. The figures here are
/// therefore stated assumptions, typical of post-route Vivado reports on a
/// -2 UltraScale+ part: a LUT (~0.1–0.15 ns) plus a typical local net
/// (~0.4–0.5 ns) per level, and a fixed overhead for clock-to-out, setup,
/// clock uncertainty and skew. A path whose levels fit the budget can still
/// fail on a long route (high fanout, far placement); one over it very
/// likely fails.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// LUT plus a typical net, per LUT level (ns).
    pub level_ns: f64,
    /// Clock-to-out + setup + clock uncertainty and skew (ns).
    pub overhead_ns: f64,
    /// Per carry cell on the path (ns).
    pub carry_ns: f64,
    /// Per MUXF7/8/9 on the path (ns).
    pub mux_ns: f64,
}

/// The assumed delays for a -2 Zynq UltraScale+ (see [`Budget`]).
pub const MINUS2: Budget = Budget {
    level_ns: 0.6,
    overhead_ns: 1.0,
    carry_ns: 0.05,
    mux_ns: 0.05,
};

impl Budget {
    /// LUT levels that fit one period of `mhz`.
    pub fn levels(&self, mhz: f64) -> u32 {
        let usable = 1000.0 / mhz - self.overhead_ns;
        if usable <= 0.0 {
            0
        } else {
            (usable / self.level_ns).floor() as u32
        }
    }

    /// Estimated delay of a path (ns), overhead included.
    pub fn path_ns(&self, p: &Path) -> f64 {
        self.overhead_ns
            + p.lut_levels as f64 * self.level_ns
            + p.carry_cells as f64 * self.carry_ns
            + p.wide_muxes as f64 * self.mux_ns
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Lut,
    Carry,
    Mux,
    LutRam,
    Reg,
    Const,
}

fn kind(ty: &str) -> Kind {
    match ty {
        "LUT1" | "LUT2" | "LUT3" | "LUT4" | "LUT5" | "LUT6" | "INV" => Kind::Lut,
        "CARRY4" | "CARRY8" => Kind::Carry,
        "MUXF7" | "MUXF8" | "MUXF9" => Kind::Mux,
        "VCC" | "GND" => Kind::Const,
        t if crate::synth::lutram_luts(t).is_some() => Kind::LutRam,
        _ => Kind::Reg,
    }
}

fn known_register(ty: &str) -> bool {
    ty.starts_with("FD")
        || ty.starts_with("RAMB")
        || ty.starts_with("FIFO")
        || ty.starts_with("DSP48")
}

fn is_clock_pin(port: &str) -> bool {
    port == "C" || port.contains("CLK")
}

/// A LUT-RAM/SRL address pin (combinational to the read data).
fn is_address_pin(port: &str) -> bool {
    port == "A"
        || port.starts_with("ADDR")
        || port.starts_with("DPRA")
        || (port.len() > 1
            && port.starts_with('A')
            && port[1..].bytes().all(|b| b.is_ascii_digit()))
}

/// Where a path starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Src {
    Reg,
    Input,
}

#[derive(Clone, Copy, Debug)]
struct Best {
    levels: u32,
    carries: u32,
    muxes: u32,
    /// The start's bit.
    start: u64,
    /// The comb cell this arrives from (None: straight from the start).
    pred: Option<usize>,
}

impl Best {
    fn key(&self) -> (u32, u32, u32) {
        (self.levels, self.carries, self.muxes)
    }
}

fn better(a: Option<Best>, b: Option<Best>) -> Option<Best> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.key() > x.key() { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

struct Comb {
    name: String,
    ty: String,
    kind: Kind,
    inputs: Vec<u64>,
    outputs: Vec<u64>,
}

/// Logic depth of module `top` in a Yosys JSON netlist (text).
pub fn depth_of_json(json: &str, top: &str) -> Result<Depth> {
    let d: JsonDesign = serde_json::from_str(json).context("parsing the Yosys JSON netlist")?;
    depth(&d, top)
}

/// Logic depth of module `top` of a parsed netlist.
pub fn depth(design: &JsonDesign, top: &str) -> Result<Depth> {
    let m = design.modules.get(top).with_context(|| {
        format!(
            "the JSON netlist has no module `{top}` (it has: {})",
            design
                .modules
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;

    // A readable name per bit: the first public net name that holds it.
    let mut names: HashMap<u64, String> = HashMap::new();
    for hidden in [0u8, 1] {
        for (name, n) in &m.netnames {
            if (n.hide_name != 0) != (hidden == 1) {
                continue;
            }
            for (i, b) in n.bits.iter().enumerate() {
                if let Bit::Net(b) = b {
                    names.entry(*b).or_insert_with(|| {
                        if n.bits.len() > 1 {
                            format!("{name}[{i}]")
                        } else {
                            name.clone()
                        }
                    });
                }
            }
        }
    }

    // Starts: register outputs and top inputs; ends: register inputs and top outputs.
    let mut starts: HashMap<u64, Src> = HashMap::new();
    let mut ends: Vec<(u64, String, bool)> = Vec::new(); // (bit, label, at a register)
    for (pname, p) in &m.ports {
        for (i, b) in p.bits.iter().enumerate() {
            let Bit::Net(b) = b else { continue };
            let label = if p.bits.len() > 1 {
                format!("{pname}[{i}]")
            } else {
                pname.clone()
            };
            match p.direction.as_str() {
                "input" => {
                    starts.insert(*b, Src::Input);
                    names.entry(*b).or_insert(label);
                }
                "output" => ends.push((*b, format!("output {label}"), false)),
                _ => {
                    starts.insert(*b, Src::Input);
                    ends.push((*b, format!("inout {label}"), false));
                }
            }
        }
    }
    let name_of = |b: u64| names.get(&b).cloned().unwrap_or_else(|| format!("net {b}"));
    let mut opaque: BTreeMap<String, u64> = BTreeMap::new();
    let mut combs: Vec<Comb> = Vec::new();
    let mut driver: HashMap<u64, usize> = HashMap::new();
    let nets = |v: &Vec<Bit>| -> Vec<u64> {
        v.iter()
            .filter_map(|b| match b {
                Bit::Net(n) => Some(*n),
                Bit::Const(_) => None,
            })
            .collect()
    };
    for (cname, c) in &m.cells {
        let k = kind(&c.ty);
        if k == Kind::Const {
            continue;
        }
        let dir = |port: &str| -> Result<&str> {
            c.port_directions
                .get(port)
                .map(String::as_str)
                .with_context(|| {
                    format!(
                        "cell `{cname}` ({}) has no direction for port `{port}` in the netlist",
                        c.ty
                    )
                })
        };
        if k == Kind::Reg {
            if !known_register(&c.ty) {
                *opaque.entry(c.ty.clone()).or_default() += 1;
            }
            let q = c
                .connections
                .iter()
                .filter(|(p, _)| c.port_directions.get(*p).map(String::as_str) == Some("output"))
                .flat_map(|(_, v)| nets(v))
                .next();
            let label = match q {
                Some(q) => name_of(q),
                None => cname.clone(),
            };
            for (port, bits) in &c.connections {
                match dir(port)? {
                    "output" => {
                        for b in nets(bits) {
                            starts.insert(b, Src::Reg);
                        }
                    }
                    _ if is_clock_pin(port) => {}
                    _ => {
                        for b in nets(bits) {
                            ends.push((b, format!("{label} ({}.{port})", c.ty), true));
                        }
                    }
                }
            }
            continue;
        }
        if k == Kind::Carry {
            // One node per bit: O[i] and CO[i] depend on S[0..=i], DI[0..=i]
            // and the carry-in pins only, so a sum bit feeding logic that
            // drives a later S of the same cell is not a loop.
            let width = c.connections.get("S").map_or(0, Vec::len);
            let carry_in: Vec<u64> = c
                .connections
                .iter()
                .filter(|(p, _)| p.starts_with("CI") || p.as_str() == "CYINIT")
                .flat_map(|(_, v)| nets(v))
                .collect();
            for i in 0..width {
                let upto = |port: &str| -> Vec<u64> {
                    c.connections
                        .get(port)
                        .map(|v| nets(&v[..(i + 1).min(v.len())].to_vec()))
                        .unwrap_or_default()
                };
                let mut inputs = carry_in.clone();
                inputs.extend(upto("S"));
                inputs.extend(upto("DI"));
                let bit = |port: &str| -> Vec<u64> {
                    c.connections
                        .get(port)
                        .and_then(|v| v.get(i))
                        .map(|b| nets(&vec![b.clone()]))
                        .unwrap_or_default()
                };
                let mut outputs = bit("O");
                outputs.extend(bit("CO"));
                let idx = combs.len();
                for &o in &outputs {
                    if let Some(prev) = driver.insert(o, idx) {
                        bail!(
                            "net `{}` has two drivers in the netlist: cells `{}` and `{cname}`",
                            name_of(o),
                            combs[prev].name
                        );
                    }
                }
                combs.push(Comb {
                    name: cname.clone(),
                    ty: c.ty.clone(),
                    kind: k,
                    inputs,
                    outputs,
                });
            }
            continue;
        }
        let mut inputs = Vec::new();
        let mut outputs = Vec::new();
        for (port, bits) in &c.connections {
            let is_out = dir(port)? == "output";
            match (k, is_out) {
                (Kind::LutRam, true) if port == "Q31" => {
                    for b in nets(bits) {
                        starts.insert(b, Src::Reg);
                    }
                }
                (_, true) => outputs.extend(nets(bits)),
                (Kind::LutRam, false) if is_clock_pin(port) => {}
                (Kind::LutRam, false) if !is_address_pin(port) => {
                    let label = format!("{cname} ({}.{port})", c.ty);
                    for b in nets(bits) {
                        ends.push((b, label.clone(), true));
                    }
                }
                (_, false) => inputs.extend(nets(bits)),
            }
        }
        let idx = combs.len();
        for &o in &outputs {
            if let Some(prev) = driver.insert(o, idx) {
                bail!(
                    "net `{}` has two drivers in the netlist: cells `{}` and `{cname}`",
                    name_of(o),
                    combs[prev].name
                );
            }
        }
        combs.push(Comb {
            name: cname.clone(),
            ty: c.ty.clone(),
            kind: k,
            inputs,
            outputs,
        });
    }

    // Kahn's order over the combinational cells.
    let preds: Vec<BTreeSet<usize>> = combs
        .iter()
        .map(|c| {
            c.inputs
                .iter()
                .filter(|b| !starts.contains_key(b))
                .filter_map(|b| driver.get(b).copied())
                .collect()
        })
        .collect();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); combs.len()];
    let mut indeg: Vec<usize> = vec![0; combs.len()];
    for (i, ps) in preds.iter().enumerate() {
        indeg[i] = ps.len();
        for &p in ps {
            succs[p].push(i);
        }
    }
    let mut ready: Vec<usize> = (0..combs.len()).filter(|&i| indeg[i] == 0).collect();
    let mut arr: Vec<[Option<Best>; 2]> = vec![[None, None]; combs.len()];
    let mut done = 0;
    let arrival = |b: u64, arr: &Vec<[Option<Best>; 2]>, src: Src| -> Option<Best> {
        let at = match starts.get(&b) {
            Some(&s) => {
                return (s == src).then_some(Best {
                    levels: 0,
                    carries: 0,
                    muxes: 0,
                    start: b,
                    pred: None,
                })
            }
            None => driver.get(&b)?,
        };
        arr[*at][src as usize].map(|a| Best {
            pred: Some(*at),
            ..a
        })
    };
    let mut loop_cuts = Vec::new();
    loop {
        let i = match ready.pop() {
            Some(i) => i,
            None if done < combs.len() => {
                // A structural loop: cut it at one of its cells (inputs not
                // yet resolved do not count) and say where.
                let Some(i) = (0..combs.len()).find(|&i| indeg[i] > 0) else {
                    break;
                };
                indeg[i] = 0;
                let c = &combs[i];
                loop_cuts.push(format!(
                    "{} {} ({})",
                    c.ty,
                    c.outputs.first().map(|&b| name_of(b)).unwrap_or_default(),
                    c.name
                ));
                i
            }
            None => break,
        };
        done += 1;
        let c = &combs[i];
        for src in [Src::Reg, Src::Input] {
            let mut best: Option<Best> = None;
            for &b in &c.inputs {
                best = better(best, arrival(b, &arr, src));
            }
            arr[i][src as usize] = best.map(|mut a| {
                match c.kind {
                    Kind::Lut | Kind::LutRam => a.levels += 1,
                    Kind::Carry => a.carries += 1,
                    Kind::Mux => a.muxes += 1,
                    Kind::Reg | Kind::Const => {}
                }
                a
            });
        }
        for &s in &succs[i] {
            // A cell cut out of a loop was already taken (its count is 0).
            if indeg[s] > 0 {
                indeg[s] -= 1;
                if indeg[s] == 0 {
                    ready.push(s);
                }
            }
        }
    }
    // The path's cells, start to end, from an end's arrival.
    let trace = |a: &Best, arr: &Vec<[Option<Best>; 2]>, src: Src| -> Vec<String> {
        let mut cells = Vec::new();
        let mut at = a.pred;
        while let Some(i) = at {
            let c = &combs[i];
            let out = c.outputs.first().map(|&b| name_of(b)).unwrap_or_default();
            cells.push(format!("{} {out}", c.ty));
            at = arr[i][src as usize].and_then(|x| x.pred);
        }
        cells.reverse();
        cells
    };
    let mut worst: [[Option<(Best, String)>; 2]; 2] = Default::default(); // [src][end at reg]
    for (b, label, at_reg) in &ends {
        for src in [Src::Reg, Src::Input] {
            let Some(a) = arrival(*b, &arr, src) else {
                continue;
            };
            let slot = &mut worst[src as usize][usize::from(!*at_reg)];
            if slot.as_ref().is_none_or(|(w, _)| a.key() > w.key()) {
                *slot = Some((a, label.clone()));
            }
        }
    }
    let path = |src: Src, end_reg: bool| -> Option<Path> {
        let (a, label) = worst[src as usize][usize::from(!end_reg)].as_ref()?;
        Some(Path {
            lut_levels: a.levels,
            carry_cells: a.carries,
            wide_muxes: a.muxes,
            from: match src {
                Src::Reg => name_of(a.start),
                Src::Input => format!("input {}", name_of(a.start)),
            },
            to: label.clone(),
            through: trace(a, &arr, src),
        })
    };
    Ok(Depth {
        reg_to_reg: path(Src::Reg, true),
        in_to_reg: path(Src::Input, true),
        reg_to_out: path(Src::Reg, false),
        in_to_out: path(Src::Input, false),
        opaque,
        loop_cuts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(port, direction, bits)`.
    type Pin<'a> = (&'a str, &'a str, &'a [u64]);
    /// `(name, type, pins)`.
    type CellSpec<'a> = (&'a str, &'a str, &'a [Pin<'a>]);

    /// A netlist builder: module `t` with `ports` (JSON text) and `cells`.
    fn netlist(ports: &str, cells: &[CellSpec]) -> String {
        let cells: Vec<String> = cells
            .iter()
            .map(|(name, ty, pins)| {
                let dirs: Vec<String> = pins
                    .iter()
                    .map(|(p, d, _)| format!("\"{p}\": \"{d}\""))
                    .collect();
                let conns: Vec<String> = pins
                    .iter()
                    .map(|(p, _, b)| format!("\"{p}\": {b:?}"))
                    .collect();
                format!(
                    "\"{name}\": {{\"hide_name\": 1, \"type\": \"{ty}\", \"parameters\": {{}}, \
                     \"attributes\": {{}}, \"port_directions\": {{{}}}, \"connections\": {{{}}}}}",
                    dirs.join(", "),
                    conns.join(", ")
                )
            })
            .collect();
        format!(
            "{{\"creator\": \"test\", \"modules\": {{\"t\": {{\"attributes\": {{}}, \
             \"ports\": {{{ports}}}, \"cells\": {{{}}}, \"netnames\": {{\
             \"q_a\": {{\"hide_name\": 0, \"bits\": [10], \"attributes\": {{}}}}, \
             \"q_b\": {{\"hide_name\": 0, \"bits\": [20, 21], \"attributes\": {{}}}}, \
             \"$auto$x\": {{\"hide_name\": 1, \"bits\": [10, 11], \"attributes\": {{}}}}}}}}}}}}",
            cells.join(", ")
        )
    }

    const CLK: (&str, &str, &[u64]) = ("C", "input", &[1]);
    const PORTS: &str = "\"clock\": {\"direction\": \"input\", \"bits\": [1]}, \
                         \"a\": {\"direction\": \"input\", \"bits\": [2, 3]}, \
                         \"y\": {\"direction\": \"output\", \"bits\": [4, \"0\"]}";

    /// reg q_a → LUT → LUT → CARRY4 → LUT → reg q_b[0]; input a → LUT → q_b[1];
    /// q_a → MUXF7 → y[0]; a[1] → y through one LUT (input → output).
    fn design() -> String {
        netlist(
            PORTS,
            &[
                (
                    "ra",
                    "FDRE",
                    &[CLK, ("D", "input", &[21]), ("Q", "output", &[10])],
                ),
                (
                    "l1",
                    "LUT2",
                    &[
                        ("I0", "input", &[10]),
                        ("I1", "input", &[2]),
                        ("O", "output", &[30]),
                    ],
                ),
                (
                    "l2",
                    "LUT1",
                    &[("I0", "input", &[30]), ("O", "output", &[31])],
                ),
                (
                    "c1",
                    "CARRY4",
                    &[
                        ("S", "input", &[31, 10, 10, 10]),
                        ("CI", "input", &[]),
                        ("O", "output", &[32, 33, 34, 35]),
                        ("CO", "output", &[36, 37, 38, 39]),
                    ],
                ),
                (
                    "l3",
                    "LUT6",
                    &[("I0", "input", &[39]), ("O", "output", &[40])],
                ),
                (
                    "rb0",
                    "FDRE",
                    &[CLK, ("D", "input", &[40]), ("Q", "output", &[20])],
                ),
                (
                    "l4",
                    "LUT2",
                    &[
                        ("I0", "input", &[3]),
                        ("I1", "input", &[20]),
                        ("O", "output", &[41]),
                    ],
                ),
                (
                    "rb1",
                    "FDRE",
                    &[
                        CLK,
                        ("D", "input", &[41]),
                        ("CE", "input", &[3]),
                        ("Q", "output", &[21]),
                    ],
                ),
                (
                    "m7",
                    "MUXF7",
                    &[
                        ("I0", "input", &[10]),
                        ("I1", "input", &[20]),
                        ("S", "input", &[42]),
                        ("O", "output", &[4]),
                    ],
                ),
                ("l5", "INV", &[("I", "input", &[3]), ("O", "output", &[42])]),
            ],
        )
    }

    #[test]
    fn walk_finds_the_known_depths() {
        let d = depth_of_json(&design(), "t").unwrap();
        let rr = d.reg_to_reg.clone().unwrap();
        assert_eq!((rr.lut_levels, rr.carry_cells, rr.wide_muxes), (3, 1, 0));
        assert_eq!(rr.from, "q_a");
        assert_eq!(rr.to, "q_b[0] (FDRE.D)");
        assert_eq!(rr.through.len(), 4, "{:?}", rr.through);
        assert!(rr.through[0].starts_with("LUT2 "), "{:?}", rr.through);
        assert!(rr.through[2].starts_with("CARRY4 "), "{:?}", rr.through);
        let ir = d.in_to_reg.clone().unwrap();
        assert_eq!(ir.lut_levels, 3, "a[0] → l1 → l2 → c1 → l3 → rb0: {ir:?}");
        assert_eq!(ir.from, "input a[0]");
        let ro = d.reg_to_out.clone().unwrap();
        assert_eq!((ro.lut_levels, ro.wide_muxes), (0, 1), "{ro:?}");
        assert_eq!(ro.to, "output y[0]");
        let io = d.in_to_out.clone().unwrap();
        assert_eq!(
            (io.lut_levels, io.wide_muxes),
            (1, 1),
            "a[1] → INV → MUXF7 → y: {io:?}"
        );
        assert_eq!(d.worst_levels(), 3);
        assert!(d.opaque.is_empty());
    }

    #[test]
    fn lutram_reads_are_a_level_and_writes_end_paths() {
        // q_a → LUT → RAM64X1D.DPRA0 → SPO/DPO → LUT → q_b[0]; q_a → D (ends).
        let j = netlist(
            PORTS,
            &[
                (
                    "ra",
                    "FDRE",
                    &[CLK, ("D", "input", &[2]), ("Q", "output", &[10])],
                ),
                (
                    "l1",
                    "LUT1",
                    &[("I0", "input", &[10]), ("O", "output", &[30])],
                ),
                (
                    "m",
                    "RAM64X1D",
                    &[
                        ("WCLK", "input", &[1]),
                        ("D", "input", &[30]),
                        ("WE", "input", &[10]),
                        ("A0", "input", &[10]),
                        ("DPRA0", "input", &[30]),
                        ("SPO", "output", &[31]),
                        ("DPO", "output", &[32]),
                    ],
                ),
                (
                    "l2",
                    "LUT2",
                    &[
                        ("I0", "input", &[31]),
                        ("I1", "input", &[32]),
                        ("O", "output", &[33]),
                    ],
                ),
                (
                    "rb0",
                    "FDRE",
                    &[CLK, ("D", "input", &[33]), ("Q", "output", &[20])],
                ),
                (
                    "dsp",
                    "DSP48E2",
                    &[
                        ("CLK", "input", &[1]),
                        ("A", "input", &[20]),
                        ("P", "output", &[4]),
                    ],
                ),
                (
                    "odd",
                    "MYSTERY",
                    &[("X", "input", &[20]), ("Y", "output", &[21])],
                ),
            ],
        );
        let d = depth_of_json(&j, "t").unwrap();
        let rr = d.reg_to_reg.unwrap();
        assert_eq!(rr.lut_levels, 3, "l1 → RAM read → l2: {rr:?}");
        assert_eq!(rr.to, "q_b[0] (FDRE.D)");
        // The DSP is a register: its output y[0] is a register → output path of 0 levels.
        assert_eq!(d.reg_to_out.unwrap().lut_levels, 0);
        assert_eq!(d.opaque.get("MYSTERY"), Some(&1));
        assert!(!d.opaque.contains_key("DSP48E2"));
    }

    #[test]
    fn loops_are_cut_and_missing_modules_are_errors() {
        let j = netlist(
            PORTS,
            &[
                (
                    "l1",
                    "LUT1",
                    &[("I0", "input", &[31]), ("O", "output", &[30])],
                ),
                (
                    "l2",
                    "LUT1",
                    &[("I0", "input", &[30]), ("O", "output", &[31])],
                ),
            ],
        );
        let d = depth_of_json(&j, "t").unwrap();
        assert_eq!(d.loop_cuts.len(), 1, "{d:?}");
        assert!(d.loop_cuts[0].starts_with("LUT1 "), "{d:?}");
        let e = format!("{:#}", depth_of_json(&j, "other").unwrap_err());
        assert!(e.contains("no module `other`") && e.contains("t"), "{e}");
        let e = format!("{:#}", depth_of_json("{\"modules\": 3}", "t").unwrap_err());
        assert!(e.contains("parsing the Yosys JSON netlist"), "{e}");
        let j = netlist(
            PORTS,
            &[
                ("x", "LUT1", &[("I0", "input", &[2]), ("O", "output", &[4])]),
                ("z", "LUT1", &[("I0", "input", &[3]), ("O", "output", &[4])]),
            ],
        );
        let e = format!("{:#}", depth_of_json(&j, "t").unwrap_err());
        assert!(e.contains("two drivers"), "{e}");
    }

    #[test]
    fn budget_of_a_clock() {
        // (6.4 - 1.0) / 0.6 = 9 levels at 156.25 MHz; (4.0 - 1.0) / 0.6 = 5 at 250 MHz.
        assert_eq!(MINUS2.levels(156.25), 9);
        assert_eq!(MINUS2.levels(250.0), 5);
        assert_eq!(MINUS2.levels(2000.0), 0);
        let p = Path {
            lut_levels: 9,
            carry_cells: 2,
            wide_muxes: 0,
            from: String::new(),
            to: String::new(),
            through: Vec::new(),
        };
        assert!((MINUS2.path_ns(&p) - 6.5).abs() < 1e-9);
    }
}
