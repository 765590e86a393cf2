//! Co-simulation bench of `axil_split`: RTL vs
//! `exanet_sim::common::axil_split`, every output every cycle, plus a
//! transaction scoreboard.
//!
//! Stimulus: an AXI4-Lite manager on the slave port issues random writes
//! (AW and W presented independently, each `valid` held until its
//! handshake, the next write's AW/W offered while the previous one is in
//! flight) and random reads, at addresses spread over the whole space with
//! extra weight just below, at and above `split` and at both ends; random
//! `bready`/`rready`. A responder on each master port takes AW, W and AR
//! with random `ready`, answers each request after a random latency
//! (sometimes long) with random `bresp`/`rdata`/`rresp`, and holds `valid`
//! until the handshake. Every `valid`/`ready` probability changes in phases
//! of random length; data lines carry random values while `valid` is low.
//! Rare `reset` pulses reset the split and every model together.
//!
//! Scoreboard (checked at each handshake, reported as port `scoreboard:…`):
//! every request reaches the side its address selects, once, in order,
//! with `m1`'s address relative to `split` and its prot/data/strobes
//! unchanged; every response reaches the slave port once, in order, with
//! the responder's code and data; nothing stays outstanding for
//! [`STALL_CYCLES`] cycles without progress.

use super::BlockInfo;
use crate::cosim::{Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_hdl::common::axil_split::emit_axil_split;
use exanet_hdl::emit::Emitted;
use exanet_sim::common::axil_split::{
    AxilSplit, AxilSplitInputs, AxilSplitOutputs, AxilSplitParams, MasterInputs,
};
use exanet_sim::point;
use exanet_sim::rng::Rng;
use std::collections::VecDeque;

/// Cycles with a transaction outstanding and no handshake anywhere before
/// the scoreboard reports a stall.
pub const STALL_CYCLES: u64 = 4000;

/// Registry entry for `exanet cosim axil_split`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "axil_split",
        about: "one AXI4-Lite slave port to two master ports split by address",
        matrix,
        point,
    }
}

/// Default matrix (split in decimal in the point text): 12-bit with
/// halves and with a one-word `m1`; 16-bit with the node's top 4 KiB page
/// and with halves; 20-bit with a quarter and a 4 KiB page.
pub fn matrix_points() -> Vec<&'static str> {
    vec![
        "addr_bits=16,split=61440",
        "addr_bits=16,split=32768",
        "addr_bits=12,split=2048",
        "addr_bits=12,split=4092",
        "addr_bits=20,split=786432",
        "addr_bits=20,split=1044480",
    ]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(matrix_points(), point)
}

/// Parse `addr_bits=..,split=..` (defaults 16 and 0xF000 = 61440).
fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(AxilSplitBench::new(point::parse(text)?)?))
}

/// What a run exercised; the integration test asserts on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AxilSplitCoverage {
    /// Writes completed at the slave port, per side.
    pub writes: [u64; 2],
    /// Reads completed at the slave port, per side.
    pub reads: [u64; 2],
    /// Slave AW handshake before the write's W.
    pub aw_first: u64,
    /// Slave W handshake before the write's AW.
    pub w_first: u64,
    /// Slave AW and W in the same cycle.
    pub aw_w_together: u64,
    /// Master AW and W handshakes in different cycles.
    pub split_issue: u64,
    /// Requests within 16 bytes of `split` (either side).
    pub at_boundary: u64,
    /// Cycles a response waited at the slave port (`valid` without `ready`).
    pub resp_stalls: u64,
    /// Reset pulses.
    pub resets: u64,
}

/// One write as the manager issued it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WriteTx {
    addr: u64,
    prot: u32,
    data: u32,
    strb: u32,
}

/// A responder on one master port.
#[derive(Clone, Debug, Default)]
struct Responder {
    aw: Option<(u64, u32)>,
    w: Option<(u32, u32)>,
    /// Write response: cycles left before `bvalid`, and `bresp`.
    b: Option<(u64, u32)>,
    /// Read response: cycles left before `rvalid`, `rdata`, `rresp`.
    r: Option<(u64, u32, u32)>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Odds {
    s_awvalid: f64,
    s_wvalid: f64,
    s_arvalid: f64,
    s_bready: f64,
    s_rready: f64,
    m_ready: [[f64; 3]; 2],
    long_latency: f64,
}

struct Ports {
    inputs: Vec<Port>,
    outputs: Vec<(String, Port)>,
}

/// The `axil_split` bench at one parameter point.
pub struct AxilSplitBench {
    params: AxilSplitParams,
    golden: AxilSplit,
    ports: Option<Ports>,
    inputs: AxilSplitInputs,
    /// Golden outputs of this cycle (state only, known before the inputs).
    out: AxilSplitOutputs,
    odds: Odds,
    phase_left: u64,
    /// Manager: AW and W not yet taken (in issue order), and whether their
    /// `valid` is up.
    aw_q: VecDeque<(u64, u32)>,
    w_q: VecDeque<(u32, u32)>,
    aw_up: bool,
    w_up: bool,
    ar_q: VecDeque<(u64, u32)>,
    ar_up: bool,
    /// Writes and reads issued and not yet seen at a master port.
    exp_writes: VecDeque<WriteTx>,
    exp_reads: VecDeque<(u64, u32)>,
    /// Responses given by a responder and not yet seen at the slave port:
    /// (side, code, data).
    exp_b: VecDeque<(usize, u32)>,
    exp_r: VecDeque<(usize, u32, u32)>,
    /// Per write at the slave port: cycle of its AW and W handshakes.
    aw_cycle: VecDeque<u64>,
    w_cycle: VecDeque<u64>,
    resp: [Responder; 2],
    rng_draw: u64,
    reset_chance: f64,
    last_progress: u64,
    cov: AxilSplitCoverage,
}

const OUTPUT_NAMES: [&str; 8] = [
    "s_awready",
    "s_wready",
    "s_bresp",
    "s_bvalid",
    "s_arready",
    "s_rdata",
    "s_rresp",
    "s_rvalid",
];
const MASTER_OUTPUTS: [&str; 11] = [
    "awaddr", "awprot", "awvalid", "wdata", "wstrb", "wvalid", "bready", "araddr", "arprot",
    "arvalid", "rready",
];
const MASTER_INPUTS: [&str; 8] = [
    "awready", "wready", "bresp", "bvalid", "arready", "rdata", "rresp", "rvalid",
];
const SLAVE_INPUTS: [&str; 12] = [
    "reset",
    "s_awaddr",
    "s_awprot",
    "s_awvalid",
    "s_wdata",
    "s_wstrb",
    "s_wvalid",
    "s_bready",
    "s_araddr",
    "s_arprot",
    "s_arvalid",
    "s_rready",
];

fn width(name: &str, addr_bits: u32) -> u32 {
    let field = name.rsplit('_').next().unwrap_or(name);
    match field {
        "awaddr" | "araddr" => addr_bits,
        "awprot" | "arprot" => 3,
        "wstrb" => 4,
        "wdata" | "rdata" => 32,
        "bresp" | "rresp" => 2,
        _ => 1,
    }
}

/// Output values in the order of [`output_names`].
fn output_values(o: &AxilSplitOutputs) -> [u64; 30] {
    let mut v = [0u64; 30];
    let head = [
        o.s_awready as u64,
        o.s_wready as u64,
        o.s_bresp as u64,
        o.s_bvalid as u64,
        o.s_arready as u64,
        o.s_rdata as u64,
        o.s_rresp as u64,
        o.s_rvalid as u64,
    ];
    v[..8].copy_from_slice(&head);
    for (k, m) in o.m.iter().enumerate() {
        let mv = [
            m.awaddr,
            m.awprot as u64,
            m.awvalid as u64,
            m.wdata as u64,
            m.wstrb as u64,
            m.wvalid as u64,
            m.bready as u64,
            m.araddr,
            m.arprot as u64,
            m.arvalid as u64,
            m.rready as u64,
        ];
        v[8 + 11 * k..8 + 11 * (k + 1)].copy_from_slice(&mv);
    }
    v
}

/// Output port names, slave first, then `m0`, then `m1`.
fn output_names() -> Vec<String> {
    let mut n: Vec<String> = OUTPUT_NAMES.iter().map(|s| s.to_string()).collect();
    for k in 0..2 {
        n.extend(MASTER_OUTPUTS.iter().map(|f| format!("m{k}_{f}")));
    }
    n
}

fn sb(cycle: u64, what: &str, expected: String, actual: String) -> Option<Mismatch> {
    Some(Mismatch {
        cycle,
        port: format!("scoreboard:{what}"),
        expected,
        actual,
    })
}

impl AxilSplitBench {
    /// A bench whose RTL and golden model share `params`.
    pub fn new(params: AxilSplitParams) -> Result<Self> {
        Self::with_golden(params.clone(), params)
    }

    /// A bench comparing the RTL of `rtl` against a golden model built with
    /// `golden` (differing only to show the bench catches a mismatch).
    pub fn with_golden(rtl: AxilSplitParams, golden: AxilSplitParams) -> Result<Self> {
        rtl.validate()?;
        let g = AxilSplit::new(&golden)?;
        Ok(AxilSplitBench {
            out: g.outputs(),
            golden: g,
            params: rtl,
            ports: None,
            inputs: AxilSplitInputs::default(),
            odds: Odds::default(),
            phase_left: 0,
            aw_q: VecDeque::new(),
            w_q: VecDeque::new(),
            aw_up: false,
            w_up: false,
            ar_q: VecDeque::new(),
            ar_up: false,
            exp_writes: VecDeque::new(),
            exp_reads: VecDeque::new(),
            exp_b: VecDeque::new(),
            exp_r: VecDeque::new(),
            aw_cycle: VecDeque::new(),
            w_cycle: VecDeque::new(),
            resp: Default::default(),
            rng_draw: 0,
            reset_chance: 1.0 / 20_000.0,
            last_progress: 0,
            cov: AxilSplitCoverage::default(),
        })
    }

    /// What the run since the last [`Bench::reset`] exercised.
    pub fn coverage(&self) -> AxilSplitCoverage {
        self.cov
    }

    fn new_phase(&mut self, rng: &mut Rng) {
        const P: [f64; 5] = [0.05, 0.3, 0.6, 0.9, 1.0];
        let pick = |rng: &mut Rng| P[rng.below(P.len() as u64) as usize];
        self.odds = Odds {
            s_awvalid: pick(rng),
            s_wvalid: pick(rng),
            s_arvalid: pick(rng),
            s_bready: pick(rng),
            s_rready: pick(rng),
            m_ready: [
                [pick(rng), pick(rng), pick(rng)],
                [pick(rng), pick(rng), pick(rng)],
            ],
            long_latency: if rng.chance(0.3) { 0.2 } else { 0.0 },
        };
        self.phase_left = 20 + rng.below(400);
    }

    fn address(&self, rng: &mut Rng) -> u64 {
        let p = &self.params;
        let mask = p.addr_mask();
        let a = match rng.below(8) {
            0..=2 => rng.next_u64(),
            3 | 4 => p.split.wrapping_add(rng.below(32)).wrapping_sub(16),
            5 => p.split + rng.below(p.window()),
            6 => rng.below(16),
            _ => mask - rng.below(16),
        };
        a & mask
    }

    fn clear_models(&mut self) {
        self.aw_q.clear();
        self.w_q.clear();
        self.ar_q.clear();
        self.aw_up = false;
        self.w_up = false;
        self.ar_up = false;
        self.exp_writes.clear();
        self.exp_reads.clear();
        self.exp_b.clear();
        self.exp_r.clear();
        self.aw_cycle.clear();
        self.w_cycle.clear();
        self.resp = Default::default();
    }

    /// A response latency from bits `shift..` of this cycle's draw: mostly
    /// 0..=3 cycles, in some phases sometimes 10..=73.
    fn latency(&self, shift: u32) -> u64 {
        let d = self.rng_draw >> shift;
        if ((d & 0xFF) as f64) < self.odds.long_latency * 256.0 {
            10 + ((d >> 8) & 63)
        } else {
            (d >> 14) & 3
        }
    }

    /// The scoreboard and the models after this cycle's handshakes.
    fn after_handshakes(&mut self, cycle: u64) -> Option<Mismatch> {
        let (i, o) = (self.inputs, self.out);
        if i.reset {
            self.clear_models();
            self.last_progress = cycle;
            return None;
        }
        let mut progress = false;
        // Slave side.
        let s_aw = o.s_awready && i.s_awvalid;
        let s_w = o.s_wready && i.s_wvalid;
        if s_aw {
            self.aw_q.pop_front();
            self.aw_up = false;
            self.aw_cycle.push_back(cycle);
        }
        if s_w {
            self.w_q.pop_front();
            self.w_up = false;
            self.w_cycle.push_back(cycle);
        }
        if let (Some(&a), Some(&w)) = (self.aw_cycle.front(), self.w_cycle.front()) {
            let c = &mut self.cov;
            match a.cmp(&w) {
                std::cmp::Ordering::Less => c.aw_first += 1,
                std::cmp::Ordering::Greater => c.w_first += 1,
                std::cmp::Ordering::Equal => c.aw_w_together += 1,
            }
            self.aw_cycle.pop_front();
            self.w_cycle.pop_front();
        }
        if o.s_arready && i.s_arvalid {
            self.ar_q.pop_front();
            self.ar_up = false;
        }
        if o.s_bvalid && i.s_bready {
            progress = true;
            let Some((side, code)) = self.exp_b.pop_front() else {
                return sb(
                    cycle,
                    "s_bresp",
                    "no write response due".into(),
                    format!("{:#x}", o.s_bresp),
                );
            };
            if o.s_bresp != code {
                return sb(
                    cycle,
                    "s_bresp",
                    format!("{code:#x}"),
                    format!("{:#x}", o.s_bresp),
                );
            }
            self.cov.writes[side] += 1;
        }
        self.cov.resp_stalls +=
            (o.s_bvalid && !i.s_bready) as u64 + (o.s_rvalid && !i.s_rready) as u64;
        if o.s_rvalid && i.s_rready {
            progress = true;
            let Some((side, data, code)) = self.exp_r.pop_front() else {
                return sb(
                    cycle,
                    "s_rdata",
                    "no read response due".into(),
                    format!("{:#x}", o.s_rdata),
                );
            };
            if (o.s_rdata, o.s_rresp) != (data, code) {
                return sb(
                    cycle,
                    "s_rdata/s_rresp",
                    format!("{data:#x}/{code:#x}"),
                    format!("{:#x}/{:#x}", o.s_rdata, o.s_rresp),
                );
            }
            self.cov.reads[side] += 1;
        }
        // Master sides.
        let p = self.params.clone();
        for k in 0..2 {
            let (m, mi) = (o.m[k], i.m[k]);
            let aw = m.awvalid && mi.awready;
            let w = m.wvalid && mi.wready;
            progress |= aw | w;
            if aw {
                self.resp[k].aw = Some((m.awaddr, m.awprot));
            }
            if w {
                self.resp[k].w = Some((m.wdata, m.wstrb));
            }
            if aw != w && (aw || w) && (self.resp[k].aw.is_none() || self.resp[k].w.is_none()) {
                self.cov.split_issue += 1;
            }
            if let (Some((addr, prot)), Some((data, strb))) = (self.resp[k].aw, self.resp[k].w) {
                self.resp[k].aw = None;
                self.resp[k].w = None;
                let Some(tx) = self.exp_writes.pop_front() else {
                    return sb(
                        cycle,
                        &format!("m{k}_aw"),
                        "no write due".into(),
                        format!("{addr:#x}"),
                    );
                };
                let side = p.to_m1(tx.addr) as usize;
                let want_addr = if side == 1 {
                    p.m1_addr(tx.addr)
                } else {
                    tx.addr
                };
                let got = (k, addr, prot, data, strb);
                let want = (side, want_addr, tx.prot, tx.data, tx.strb);
                if got != want {
                    return sb(
                        cycle,
                        &format!("m{k}_write"),
                        format!("side/addr/prot/data/strb {want:x?}"),
                        format!("{got:x?}"),
                    );
                }
                self.cov.at_boundary += (tx.addr.abs_diff(p.split) <= 16) as u64;
                let code = (self.rng_draw & 3) as u32;
                let lat = self.latency(20);
                self.resp[k].b = Some((lat, code));
                self.exp_b.push_back((k, code));
            }
            if mi.bvalid && m.bready {
                progress = true;
                self.resp[k].b = None;
            }
            if m.arvalid && mi.arready {
                progress = true;
                let Some((a, prot)) = self.exp_reads.pop_front() else {
                    return sb(
                        cycle,
                        &format!("m{k}_ar"),
                        "no read due".into(),
                        format!("{:#x}", m.araddr),
                    );
                };
                let side = p.to_m1(a) as usize;
                let want_addr = if side == 1 { p.m1_addr(a) } else { a };
                if (k, m.araddr, m.arprot) != (side, want_addr, prot) {
                    return sb(
                        cycle,
                        &format!("m{k}_read"),
                        format!("side/addr/prot {:x?}", (side, want_addr, prot)),
                        format!("{:x?}", (k, m.araddr, m.arprot)),
                    );
                }
                self.cov.at_boundary += (a.abs_diff(p.split) <= 16) as u64;
                let data = (self.rng_draw >> 16) as u32;
                let code = ((self.rng_draw >> 2) & 3) as u32;
                let lat = self.latency(40);
                self.resp[k].r = Some((lat, data, code));
                self.exp_r.push_back((k, data, code));
            }
            if mi.rvalid && m.rready {
                progress = true;
                self.resp[k].r = None;
            }
        }
        if progress {
            self.last_progress = cycle;
        }
        let busy = !(self.exp_writes.is_empty()
            && self.exp_reads.is_empty()
            && self.exp_b.is_empty()
            && self.exp_r.is_empty());
        if busy && cycle - self.last_progress > STALL_CYCLES {
            return sb(
                cycle,
                "stall",
                format!("progress within {STALL_CYCLES} cycles"),
                format!(
                    "{} writes, {} reads, {} write and {} read responses outstanding",
                    self.exp_writes.len(),
                    self.exp_reads.len(),
                    self.exp_b.len(),
                    self.exp_r.len()
                ),
            );
        }
        None
    }
}

impl Bench for AxilSplitBench {
    fn block(&self) -> &str {
        "axil_split"
    }

    fn point(&self) -> String {
        point::to_text(&self.params)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_axil_split(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let a = self.params.addr_bits;
        let mut inputs = Vec::new();
        for n in SLAVE_INPUTS {
            inputs.push(sim.port_w(n, width(n, a))?);
        }
        for k in 0..2 {
            for f in MASTER_INPUTS {
                inputs.push(sim.port_w(&format!("m{k}_{f}"), width(f, a))?);
            }
        }
        let mut outputs = Vec::new();
        for n in output_names() {
            let port = sim.port_w(&n, width(&n, a))?;
            outputs.push((n, port));
        }
        self.ports = Some(Ports { inputs, outputs });
        Ok(())
    }

    fn reset(&mut self) {
        self.golden.power_on();
        self.out = self.golden.outputs();
        self.inputs = AxilSplitInputs::default();
        self.phase_left = 0;
        self.clear_models();
        self.last_progress = 0;
        self.cov = AxilSplitCoverage::default();
    }

    fn drive(&mut self, rng: &mut Rng, _cycle: u64) {
        if self.phase_left == 0 {
            self.new_phase(rng);
        }
        self.phase_left -= 1;
        self.out = self.golden.outputs();
        self.rng_draw = rng.next_u64();
        let od = self.odds;
        let mask = self.params.addr_mask();
        // Manager: new transactions (at most two ahead per channel).
        if self.aw_q.len() < 2 && rng.chance(0.3) {
            let tx = WriteTx {
                addr: self.address(rng),
                prot: rng.below(8) as u32,
                data: rng.next_u64() as u32,
                strb: rng.below(16) as u32,
            };
            self.aw_q.push_back((tx.addr, tx.prot));
            self.w_q.push_back((tx.data, tx.strb));
            self.exp_writes.push_back(tx);
        }
        if self.ar_q.len() < 2 && rng.chance(0.3) {
            let a = (self.address(rng), rng.below(8) as u32);
            self.ar_q.push_back(a);
            self.exp_reads.push_back(a);
        }
        self.aw_up = !self.aw_q.is_empty() && (self.aw_up || rng.chance(od.s_awvalid));
        self.w_up = !self.w_q.is_empty() && (self.w_up || rng.chance(od.s_wvalid));
        self.ar_up = !self.ar_q.is_empty() && (self.ar_up || rng.chance(od.s_arvalid));
        let noise = rng.next_u64();
        let (awaddr, awprot) = match self.aw_q.front() {
            Some(&x) if self.aw_up => x,
            _ => (noise & mask, (noise >> 40) as u32 & 7),
        };
        let (wdata, wstrb) = match self.w_q.front() {
            Some(&x) if self.w_up => x,
            _ => ((noise >> 7) as u32, (noise >> 50) as u32 & 15),
        };
        let (araddr, arprot) = match self.ar_q.front() {
            Some(&x) if self.ar_up => x,
            _ => ((noise >> 13) & mask, (noise >> 60) as u32 & 7),
        };
        let reset = rng.chance(self.reset_chance);
        self.cov.resets += reset as u64;
        let mut i = AxilSplitInputs {
            reset,
            s_awaddr: awaddr,
            s_awprot: awprot,
            s_awvalid: self.aw_up,
            s_wdata: wdata,
            s_wstrb: wstrb,
            s_wvalid: self.w_up,
            s_bready: rng.chance(od.s_bready),
            s_araddr: araddr,
            s_arprot: arprot,
            s_arvalid: self.ar_up,
            s_rready: rng.chance(od.s_rready),
            m: [MasterInputs::default(); 2],
        };
        // Responders.
        for k in 0..2 {
            let noise = rng.next_u64();
            let r = &mut self.resp[k];
            let mut mi = MasterInputs {
                awready: rng.chance(od.m_ready[k][0]),
                wready: rng.chance(od.m_ready[k][1]),
                arready: rng.chance(od.m_ready[k][2]),
                bresp: noise as u32 & 3,
                rdata: (noise >> 8) as u32,
                rresp: (noise >> 4) as u32 & 3,
                ..Default::default()
            };
            if let Some((lat, code)) = &mut r.b {
                if *lat == 0 {
                    mi.bvalid = true;
                    mi.bresp = *code;
                } else {
                    *lat -= 1;
                }
            }
            if let Some((lat, data, code)) = &mut r.r {
                if *lat == 0 {
                    mi.rvalid = true;
                    mi.rdata = *data;
                    mi.rresp = *code;
                } else {
                    *lat -= 1;
                }
            }
            i.m[k] = mi;
        }
        self.inputs = i;
        let p = self.ports.as_ref().expect("bind before drive");
        let mut vals = vec![
            i.reset as u64,
            i.s_awaddr,
            i.s_awprot as u64,
            i.s_awvalid as u64,
            i.s_wdata as u64,
            i.s_wstrb as u64,
            i.s_wvalid as u64,
            i.s_bready as u64,
            i.s_araddr,
            i.s_arprot as u64,
            i.s_arvalid as u64,
            i.s_rready as u64,
        ];
        for m in &i.m {
            vals.extend([
                m.awready as u64,
                m.wready as u64,
                m.bresp as u64,
                m.bvalid as u64,
                m.arready as u64,
                m.rdata as u64,
                m.rresp as u64,
                m.rvalid as u64,
            ]);
        }
        for (port, v) in p.inputs.iter().zip(vals) {
            port.set(v);
        }
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let p = self.ports.as_ref().expect("bind before check");
        for ((name, port), want) in p.outputs.iter().zip(output_values(&self.out)) {
            let got = port.get();
            if got != want {
                return Some(Mismatch::hex(cycle, name, want, got));
            }
        }
        self.after_handshakes(cycle)
    }

    fn advance(&mut self) {
        self.golden.tick(&self.inputs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_and_reject_bad_keys_and_values() {
        assert_eq!(
            point("addr_bits=16,split=61440").unwrap().point(),
            "addr_bits=16,split=61440"
        );
        assert_eq!(point("").unwrap().point(), "addr_bits=16,split=61440");
        let e = point("addr_bits=16,splitt=3").err().unwrap().to_string();
        assert!(e.contains("splitt"), "{e}");
        let e = point("addr_bits=16,split=53248").err().unwrap().to_string();
        assert!(e.contains("axil_split.split = 0xd000"), "{e}");
        let e = point("addr_bits=8,split=128").err().unwrap().to_string();
        assert!(e.contains("axil_split.addr_bits = 8"), "{e}");
        assert!(matrix().len() >= 6);
        for b in matrix() {
            assert_eq!(point(&b.point()).unwrap().point(), b.point());
        }
        assert_eq!(
            output_names().len(),
            output_values(&Default::default()).len()
        );
    }
}
