//! Co-simulation bench of `link_status`: the RTL status block against the
//! golden `exanet_sim::link::status::LinkStatus`, cycle by cycle. Each
//! link's state changes at random and its counters grow by random steps
//! (sometimes past 2^32); an AXI4-Lite master reads random addresses (valid
//! registers of every link, unaligned addresses, addresses beyond the last
//! link) with random `arvalid`/`rready` timing and tries random writes with
//! random `bready`. Every output (ready signals, read response and data,
//! write response) is compared every cycle. A synchronous reset at random
//! (about one cycle in 2,000) returns the RTL and the golden model to
//! power-on together; the master drops what it held.

use super::BlockInfo;
use crate::cosim::{cmp, Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_hdl::emit::Emitted;
use exanet_hdl::link::link_status::{emit_link_status, COUNTER_BITS_PER_LINK};
use exanet_sim::link::status::{
    LinkSample, LinkStatus, StatusInputs, StatusOutputs, COUNTER_REGS, MAX_LINKS, REGS_PER_LINK,
};
use exanet_sim::link::LinkState;
use exanet_sim::point;
use exanet_sim::rng::Rng;
use serde::{Deserialize, Serialize};

/// Registry entry for `exanet cosim link_status`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "link_status",
        about: "link state and counters of N links over AXI4-Lite (read-only)",
        matrix,
        point,
    }
}

/// Default matrix: 1, 6 (the default router's network ports) and 16 links.
pub fn matrix_points() -> Vec<&'static str> {
    vec!["links=6", "links=1", "links=16"]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(matrix_points(), point)
}

fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(LinkStatusBench::new(point::parse(text)?)?))
}

/// One bench point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkStatusPoint {
    /// Links served, 1..=16.
    pub links: usize,
}

impl Default for LinkStatusPoint {
    fn default() -> Self {
        LinkStatusPoint { links: 6 }
    }
}

/// What a run exercised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStatusCoverage {
    /// Reads answered OKAY.
    pub reads_ok: u64,
    /// Reads answered SLVERR.
    pub reads_err: u64,
    /// Writes refused.
    pub writes: u64,
    /// Read responses held by `rready` low.
    pub read_stalls: u64,
    /// Resets with a read or write response pending.
    pub resets_busy: u64,
}

#[derive(Clone)]
struct Ports {
    reset: Port,
    link_state: Port,
    link_counters: Port,
    araddr: Port,
    arvalid: Port,
    arready: Port,
    rdata: Port,
    rresp: Port,
    rvalid: Port,
    rready: Port,
    awvalid: Port,
    awready: Port,
    wvalid: Port,
    wready: Port,
    bresp: Port,
    bvalid: Port,
    bready: Port,
}

/// The bench.
pub struct LinkStatusBench {
    pt: LinkStatusPoint,
    golden: LinkStatus,
    ports: Option<Ports>,
    inputs: StatusInputs,
    expected: StatusOutputs,
    cov: LinkStatusCoverage,
    /// Last cycle's read / write request was not taken: hold it (AXI).
    ar_held: bool,
    aw_held: bool,
    /// This cycle's synchronous reset.
    reset: bool,
}

impl LinkStatusBench {
    /// A bench at `pt`.
    pub fn new(pt: LinkStatusPoint) -> Result<Self> {
        if !(1..=MAX_LINKS).contains(&pt.links) {
            anyhow::bail!("link_status.links = {}: must be 1..={MAX_LINKS}", pt.links);
        }
        Ok(LinkStatusBench {
            golden: LinkStatus::new(pt.links)?,
            pt,
            ports: None,
            inputs: StatusInputs::default(),
            expected: StatusOutputs::default(),
            cov: LinkStatusCoverage::default(),
            ar_held: false,
            aw_held: false,
            reset: false,
        })
    }

    /// What the run exercised.
    pub fn coverage(&self) -> LinkStatusCoverage {
        self.cov
    }
}

fn set_counter(s: &mut LinkSample, k: usize, v: u64) {
    use exanet_sim::link::status::Reg::*;
    let c = &mut s.counters;
    let f = match COUNTER_REGS[k] {
        FramesSent => &mut c.frames_sent,
        FramesReceived => &mut c.frames_received,
        CrcErrors => &mut c.crc_errors,
        Retransmissions => &mut c.retransmissions,
        Timeouts => &mut c.timeouts,
        LinkDowns => &mut c.link_downs,
        CtrlCrcErrors => &mut c.ctrl_crc_errors,
        SeqErrors => &mut c.seq_errors,
        Duplicates => &mut c.duplicates,
        BadAcks => &mut c.bad_acks,
        TrainingErrors => &mut c.training_errors,
        Overflows => &mut c.overflows,
        WordsReplayed => &mut c.words_replayed,
        CtrlSent => &mut c.ctrl_sent,
        RxOverflows => {
            s.rx_overflows = v as u32;
            return;
        }
        State => unreachable!("not a counter"),
    };
    *f = v;
}

impl Bench for LinkStatusBench {
    fn block(&self) -> &str {
        "link_status"
    }

    fn point(&self) -> String {
        point::to_text(&self.pt)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_link_status(self.pt.links)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let n = self.pt.links as u32;
        self.ports = Some(Ports {
            reset: sim.port_w("reset", 1)?,
            link_state: sim.port_w("link_state", 2 * n)?,
            link_counters: sim.port_w("link_counters", COUNTER_BITS_PER_LINK as u32 * n)?,
            araddr: sim.port_w("s_araddr", 32)?,
            arvalid: sim.port_w("s_arvalid", 1)?,
            arready: sim.port_w("s_arready", 1)?,
            rdata: sim.port_w("s_rdata", 32)?,
            rresp: sim.port_w("s_rresp", 2)?,
            rvalid: sim.port_w("s_rvalid", 1)?,
            rready: sim.port_w("s_rready", 1)?,
            awvalid: sim.port_w("s_awvalid", 1)?,
            awready: sim.port_w("s_awready", 1)?,
            wvalid: sim.port_w("s_wvalid", 1)?,
            wready: sim.port_w("s_wready", 1)?,
            bresp: sim.port_w("s_bresp", 2)?,
            bvalid: sim.port_w("s_bvalid", 1)?,
            bready: sim.port_w("s_bready", 1)?,
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.golden = LinkStatus::new(self.pt.links).expect("checked");
        self.inputs = StatusInputs {
            links: vec![LinkSample::default(); self.pt.links],
            ..Default::default()
        };
        self.cov = LinkStatusCoverage::default();
        self.ar_held = false;
        self.aw_held = false;
        self.reset = false;
    }

    fn drive(&mut self, rng: &mut Rng, _cycle: u64) {
        let p = self.ports.as_ref().expect("bind before drive");
        let n = self.pt.links;
        let i = &mut self.inputs;
        // The links move on.
        for s in i.links.iter_mut() {
            if rng.chance(0.01) {
                s.state = match rng.below(3) {
                    0 => LinkState::Down,
                    1 => LinkState::Training,
                    _ => LinkState::Up,
                };
            }
            for (k, reg) in COUNTER_REGS.iter().enumerate() {
                if rng.chance(0.2) {
                    let now = reg.value(s) as u64;
                    let step = if rng.chance(0.01) {
                        rng.next_u64() >> 20
                    } else {
                        rng.below(4)
                    };
                    set_counter(s, k, now + step);
                }
            }
        }
        // The master: keep arvalid until taken (AXI), random otherwise.
        if !self.ar_held {
            i.arvalid = rng.chance(0.5);
            let words = (n * REGS_PER_LINK) as u64;
            i.araddr = match rng.below(8) {
                0 => rng.next_u64() as u32,
                1 => 4 * (words + rng.below(64)) as u32,
                2 => (4 * rng.below(words) + 1 + rng.below(3)) as u32,
                _ => 4 * rng.below(words) as u32,
            };
        }
        i.rready = rng.chance(0.6);
        if !self.aw_held {
            i.awvalid = rng.chance(0.1);
            i.wvalid = rng.chance(0.5);
        }
        i.bready = rng.chance(0.6);
        self.expected = self.golden.outputs(i);
        let o = self.expected;
        if o.rvalid && i.rready {
            if o.rresp == 0 {
                self.cov.reads_ok += 1;
            } else {
                self.cov.reads_err += 1;
            }
        }
        self.cov.read_stalls += (o.rvalid && !i.rready) as u64;
        self.cov.writes += o.awready as u64;
        // To the RTL.
        self.reset = rng.chance(1.0 / 2_000.0);
        self.cov.resets_busy += (self.reset && (o.rvalid || o.bvalid)) as u64;
        p.reset.set(self.reset as u64);
        let st = i
            .links
            .iter()
            .enumerate()
            .fold(0u64, |m, (l, s)| m | (s.state as u64) << (2 * l));
        p.link_state.set_words(&[st as u32, (st >> 32) as u32]);
        let words: Vec<u32> = i
            .links
            .iter()
            .flat_map(|s| COUNTER_REGS.iter().map(|r| r.value(s)).collect::<Vec<_>>())
            .collect();
        p.link_counters.set_words(&words);
        p.araddr.set(i.araddr as u64);
        p.arvalid.set(i.arvalid as u64);
        p.rready.set(i.rready as u64);
        p.awvalid.set(i.awvalid as u64);
        p.wvalid.set(i.wvalid as u64);
        p.bready.set(i.bready as u64);
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let p = self.ports.as_ref().expect("bind before check");
        let o = &self.expected;
        cmp(cycle, "s_arready", o.arready as u64, p.arready.get())
            .or_else(|| cmp(cycle, "s_rvalid", o.rvalid as u64, p.rvalid.get()))
            .or_else(|| {
                if !o.rvalid {
                    return None;
                }
                cmp(cycle, "s_rdata", o.rdata as u64, p.rdata.get())
                    .or_else(|| cmp(cycle, "s_rresp", o.rresp as u64, p.rresp.get()))
            })
            .or_else(|| cmp(cycle, "s_awready", o.awready as u64, p.awready.get()))
            .or_else(|| cmp(cycle, "s_wready", o.wready as u64, p.wready.get()))
            .or_else(|| cmp(cycle, "s_bvalid", o.bvalid as u64, p.bvalid.get()))
            .or_else(|| {
                if !o.bvalid {
                    return None;
                }
                cmp(cycle, "s_bresp", o.bresp as u64, p.bresp.get())
            })
    }

    fn advance(&mut self) {
        let (i, o) = (&self.inputs, self.expected);
        if self.reset {
            // Power-on; the master starts afresh.
            self.golden = LinkStatus::new(self.pt.links).expect("checked");
            self.ar_held = false;
            self.aw_held = false;
            return;
        }
        self.ar_held = i.arvalid && !o.arready;
        self.aw_held = i.awvalid && i.wvalid && !o.awready;
        self.golden.tick(&self.inputs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_and_reject_bad_values() {
        assert_eq!(point("").unwrap().point(), "links=6");
        let e = format!("{:#}", point("links=0").err().unwrap());
        assert!(e.contains("link_status.links = 0"), "{e}");
        let e = format!("{:#}", point("links=17").err().unwrap());
        assert!(e.contains("link_status.links = 17"), "{e}");
    }
}
