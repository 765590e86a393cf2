//! `node`: the definitions the node top (`exanet_hdl::node`, module
//! `exanet_node`) shares with its golden model.
//!
//! The node joins the NI, the router, one `link_tx` / `link_rx` pair per
//! network port of the router, and per link two `async_fifo` crossings
//! between the PL clock and the transceiver's user clock: TX (PL → user
//! clock) and RX (user clock → PL). Both carry one PHY word
//! ([`crate::link::PhyWord`]) per entry, packed as [`pack_phy_word`] says.

mod top;

pub use top::{GoldenNode, GoldenNodeParams, NodeOutputs, NodePlInputs, StatusRead};

use crate::common::async_fifo::{
    from_gray, to_gray, AsyncFifo, AsyncFifoParams, ReadInputs, ResetSync, WriteInputs,
};
use crate::link::link_rx::{LinkRx, RxInputs, RxOutputs};
use crate::link::link_tx::{LinkTx, TxInputs};
use crate::link::{LinkParams, PhyWord};
use crate::router::flit::Flit;
use anyhow::{bail, Result};

/// Address bits of the node's AXI4-Lite register window (`s_axil_*addr`).
pub const AXIL_ADDR_BITS: u32 = 16;
/// Base of the `link_status` page in the node's AXI4-Lite window: the top
/// 4 KiB page. Below it the NI's registers (`axil_split`'s `m0`), from it
/// on the status of every link of the node (`m1`, addresses relative to
/// it: [`crate::link::status`]'s map).
pub const LINK_STATUS_BASE: u64 = 0xF000;

/// The split of the node's AXI4-Lite window (`axil_split`): the NI below
/// [`LINK_STATUS_BASE`], `link_status` from it on.
pub fn axil_split_params() -> crate::common::axil_split::AxilSplitParams {
    crate::common::axil_split::AxilSplitParams {
        addr_bits: AXIL_ADDR_BITS,
        split: LINK_STATUS_BASE,
    }
}

/// Bits of one crossing-FIFO entry: the 64-bit PHY word plus its control bit.
pub const PHY_FIFO_WIDTH: u32 = 65;
/// Bit of a crossing-FIFO entry that holds [`PhyWord::ctrl`]; bits
/// `[63:0]` hold [`PhyWord::data`].
pub const PHY_FIFO_CTRL_BIT: u32 = 64;

/// A PHY word as one crossing-FIFO entry.
pub fn pack_phy_word(w: PhyWord) -> u128 {
    (w.data as u128) | ((w.ctrl as u128) << PHY_FIFO_CTRL_BIT)
}

/// A crossing-FIFO entry as a PHY word.
pub fn unpack_phy_word(v: u128) -> PhyWord {
    PhyWord {
        data: v as u64,
        ctrl: (v >> PHY_FIFO_CTRL_BIT) & 1 == 1,
    }
}

/// Whether the RX crossing of a link can overflow: the transceiver pushes at
/// most one word per user-clock edge and the node pops one word per PL-clock
/// edge whenever the FIFO is not empty, so the FIFO cannot fill while the PL
/// clock is at least as fast as the user clock (`pl_mhz >= user_clk_mhz`).
/// With a slower PL clock, a far end that sends a word on every user-clock
/// edge for long enough fills it (Aurora has no RX backpressure); the node
/// counts the words lost in its `rx_overflows` counter.
pub fn rx_crossing_can_overflow(pl_mhz: f64, user_clk_mhz: f64) -> bool {
    pl_mhz < user_clk_mhz
}

/// PL-domain inputs of one link end at a PL clock edge (what its router
/// and the node's PL reset show before the edge).
#[derive(Clone, Copy, Debug, Default)]
pub struct PlInputs {
    /// The node's synchronized PL reset (`pl_rst`).
    pub reset: bool,
    /// The router's output flit on this network port.
    pub flit: Option<Flit>,
    /// Credits the router returns to `link_rx`, one bit per VC.
    pub router_credit: u32,
    /// The transceiver's `channel_up` (asynchronous to the PL clock).
    pub channel_up: bool,
}

/// User-clock-domain inputs of one link end at a user clock edge.
#[derive(Clone, Copy, Debug, Default)]
pub struct UserInputs {
    /// The node's `rst` (the PS reset, synchronized here into the user clock).
    pub rst: bool,
    /// The transceiver takes the TX word (`tx_tready`).
    pub tx_ready: bool,
    /// The word the transceiver delivers (`rx_tvalid`, `rx_tdata`, `rx_ctrl`).
    pub rx_word: Option<PhyWord>,
}

/// What one link end shows (functions of its registers: valid between edges).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkEndOutputs {
    /// To the transceiver: `tx_tvalid` with `tx_tdata` / `tx_ctrl`.
    pub tx_word: Option<PhyWord>,
    /// `link_tx`'s word to the TX crossing (before it).
    pub phy_tx: Option<PhyWord>,
    /// The TX crossing is full (`link_tx`'s `phy_tx_ready` is its inverse).
    pub tx_full: bool,
    /// The word the RX crossing hands `link_rx` this PL cycle.
    pub phy_rx: Option<PhyWord>,
    /// `link_rx`'s lane-up input (channel_up through the synchronizer).
    pub lane_up: bool,
    /// `link_rx`'s flit to the router and status.
    pub rx: RxOutputs,
    /// `link_tx`'s credit to the router (a flit left its VC buffer).
    pub credit: Option<u8>,
    /// Words lost at the full RX crossing (user-clock domain, 32-bit wrapping).
    pub rx_overflows: u32,
    /// [`LinkEndOutputs::rx_overflows`] as the PL domain sees it (what
    /// `link_status` reads): the user domain registers its Gray code
    /// ([`to_gray`]) one user edge after the counter, the PL domain samples
    /// that through `sync_stages` flip-flops (cleared by `pl_rst`) and
    /// turns it back into binary ([`from_gray`]).
    pub rx_overflows_pl: u32,
}

/// Golden model of one link end of the node top (`exanet_hdl::node`):
/// `link_tx` + `link_rx` in the PL domain, the TX and RX crossings, the
/// user-clock reset synchronizer, the channel_up synchronizer and the RX
/// overflow counter, stepped on the edges of the two clocks exactly as the
/// RTL's registers are.
#[derive(Clone, Debug)]
pub struct NodeLinkEnd {
    link: LinkParams,
    tx: LinkTx,
    rx: LinkRx,
    tx_fifo: AsyncFifo,
    rx_fifo: AsyncFifo,
    user_rst: ResetSync,
    lane_down: ResetSync,
    rx_overflows: u32,
    rx_ovf_gray: u32,
    rx_ovf_sync: Vec<u32>,
}

impl NodeLinkEnd {
    /// A link end at power-on. `cdc.width` must be [`PHY_FIFO_WIDTH`].
    pub fn new(link: &LinkParams, cdc: &AsyncFifoParams, reset_stages: u32) -> Result<Self> {
        if cdc.width != PHY_FIFO_WIDTH {
            bail!(
                "node: async_fifo.width = {}: must be {PHY_FIFO_WIDTH} (a PHY word plus its control bit)",
                cdc.width
            );
        }
        Ok(NodeLinkEnd {
            link: link.clone(),
            tx: LinkTx::new(link)?,
            rx: LinkRx::new(link)?,
            tx_fifo: AsyncFifo::new(cdc)?,
            rx_fifo: AsyncFifo::new(cdc)?,
            user_rst: ResetSync::new(reset_stages)?,
            lane_down: ResetSync::new(reset_stages)?,
            rx_overflows: 0,
            rx_ovf_gray: 0,
            rx_ovf_sync: vec![0; cdc.sync_stages as usize],
        })
    }

    /// Every output now.
    pub fn outputs(&self) -> LinkEndOutputs {
        let t = self.tx_fifo.outputs();
        let r = self.rx_fifo.outputs();
        let txo = self.tx.outputs();
        LinkEndOutputs {
            tx_word: (!t.empty).then(|| unpack_phy_word(t.dout)),
            phy_tx: txo.word,
            tx_full: t.full,
            phy_rx: (!r.empty).then(|| unpack_phy_word(r.dout)),
            lane_up: !self.lane_down.output(),
            rx: *self.rx.outputs(),
            credit: txo.credit,
            rx_overflows: self.rx_overflows,
            rx_overflows_pl: from_gray(self.rx_ovf_sync.last().copied().unwrap_or(0)),
        }
    }

    /// The `link_tx` model (counters, state).
    pub fn link_tx(&self) -> &LinkTx {
        &self.tx
    }

    /// The `link_rx` model.
    pub fn link_rx(&self) -> &LinkRx {
        &self.rx
    }

    /// One instant at which the PL clock (`pl` is `Some`), the user clock
    /// (`user`), or both rise. Every register samples what the outputs
    /// showed before the instant.
    pub fn edge(&mut self, pl: Option<&PlInputs>, user: Option<&UserInputs>) -> Result<()> {
        let before = self.outputs();
        let user_rst = self.user_rst.output();
        let (wr_tx, rd_rx) = match pl {
            Some(i) => (
                Some(WriteInputs {
                    reset: i.reset,
                    push: before.phy_tx.is_some() && !before.tx_full,
                    din: before.phy_tx.map(pack_phy_word).unwrap_or(0),
                }),
                Some(ReadInputs {
                    reset: i.reset,
                    pop: before.phy_rx.is_some(),
                }),
            ),
            None => (None, None),
        };
        let (rd_tx, wr_rx) = match user {
            Some(u) => (
                Some(ReadInputs {
                    reset: user_rst,
                    pop: before.tx_word.is_some() && u.tx_ready,
                }),
                Some(WriteInputs {
                    reset: user_rst,
                    push: u.rx_word.is_some(),
                    din: u.rx_word.map(pack_phy_word).unwrap_or(0),
                }),
            ),
            None => (None, None),
        };
        let rx_full = self.rx_fifo.outputs().full;
        let ovf_gray = self.rx_ovf_gray;
        self.tx_fifo.edge(wr_tx.as_ref(), rd_tx.as_ref());
        self.rx_fifo.edge(wr_rx.as_ref(), rd_rx.as_ref());
        if let Some(u) = user {
            self.rx_ovf_gray = if user_rst {
                0
            } else {
                to_gray(self.rx_overflows)
            };
            if user_rst {
                self.rx_overflows = 0;
            } else if u.rx_word.is_some() && rx_full {
                self.rx_overflows = self.rx_overflows.wrapping_add(1);
            }
            self.user_rst.edge(u.rst);
        }
        if let Some(i) = pl {
            if i.reset {
                self.tx = LinkTx::new(&self.link)?;
                self.rx = LinkRx::new(&self.link)?;
            } else {
                let status = before.rx.status;
                self.tx.tick(&TxInputs {
                    flit: i.flit,
                    ready: !before.tx_full,
                    rx: status,
                });
                self.rx.tick(&RxInputs {
                    word: before.phy_rx,
                    lane_up: before.lane_up,
                    router_credit: i.router_credit,
                });
            }
            self.lane_down.edge(!i.channel_up);
            if i.reset {
                self.rx_ovf_sync.iter_mut().for_each(|s| *s = 0);
            } else {
                self.rx_ovf_sync.rotate_right(1);
                self.rx_ovf_sync[0] = ovf_gray;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phy_words_round_trip_and_ctrl_is_the_top_bit() {
        for w in [
            PhyWord {
                data: u64::MAX,
                ctrl: false,
            },
            PhyWord {
                data: 0x1234,
                ctrl: true,
            },
        ] {
            let v = pack_phy_word(w);
            assert!(v < 1 << PHY_FIFO_WIDTH);
            assert_eq!(unpack_phy_word(v), w);
            assert_eq!(v >> PHY_FIFO_CTRL_BIT == 1, w.ctrl);
        }
    }

    #[test]
    fn overflow_rule() {
        assert!(rx_crossing_can_overflow(156.25, 161.1328125));
        assert!(!rx_crossing_can_overflow(200.0, 161.1328125));
        assert!(!rx_crossing_can_overflow(161.1328125, 161.1328125));
    }

    use crate::link::phy::{Phy, PhyParams};

    /// Two link ends (PL clocks 6400 ps and 6390 ps, one user clock of
    /// `user_ps`) joined by two golden PHY directions: every flit end A's
    /// router sends (credit-limited) reaches end B's router in order and
    /// unchanged, through both crossings, and no RX crossing overflows when
    /// the PL clocks are at least as fast as the user clock.
    fn run_pair(user_ps: u64, flits: usize) -> (Vec<Flit>, Vec<Flit>, [u32; 2]) {
        let link = LinkParams::sized(128, 4, 1, 32);
        let cdc = AsyncFifoParams::default();
        let mut ends = [
            NodeLinkEnd::new(&link, &cdc, 2).unwrap(),
            NodeLinkEnd::new(&link, &cdc, 2).unwrap(),
        ];
        let mut phys = [
            Phy::new(&PhyParams {
                latency_cycles: 3,
                cc_period: 100,
                ..Default::default()
            })
            .unwrap(),
            Phy::new(&PhyParams {
                latency_cycles: 3,
                ..Default::default()
            })
            .unwrap(),
        ];
        let pl_ps = [6400u64, 6390];
        let mut next = [pl_ps[0], pl_ps[1], user_ps];
        let mut pl_rst = [ResetSync::new(2).unwrap(), ResetSync::new(2).unwrap()];
        let mut pl_cycles = [0u64; 2];
        let mut user_cycle = 0u64;
        let mut credits = vec![link.tx_buffer_flits; link.vcs];
        let (mut sent, mut got) = (Vec::new(), Vec::new());
        let mut pending_credit = 0u32;
        let mut k = 0u64;
        while got.len() < flits && k < 2_000_000 {
            k += 1;
            let t = *next.iter().min().unwrap();
            let pl_edge = [next[0] == t, next[1] == t];
            let user_edge = next[2] == t;
            let rst = pl_cycles[0] < 4;
            // The transceivers: A -> B on phys[0], B -> A on phys[1].
            let mut user_in = [None, None];
            if user_edge {
                let mut arrived = [None, None];
                let mut ready = [false; 2];
                for d in 0..2 {
                    ready[d] = phys[d].ready(user_cycle);
                    let shown = ends[d].outputs().tx_word;
                    arrived[1 - d] = phys[d].step(if ready[d] { shown } else { None }, true);
                }
                for e in 0..2 {
                    user_in[e] = Some(UserInputs {
                        rst,
                        tx_ready: ready[e],
                        rx_word: arrived[e],
                    });
                }
            }
            for e in 0..2 {
                let pl = pl_edge[e].then(|| {
                    let o = ends[e].outputs();
                    let reset = pl_rst[e].output();
                    let mut i = PlInputs {
                        reset,
                        channel_up: user_cycle > 10,
                        ..Default::default()
                    };
                    if e == 0 {
                        if let Some(v) = o.credit {
                            credits[v as usize] += 1;
                        }
                        let vc = sent.len() % link.vcs;
                        if !reset && sent.len() < flits && credits[vc] > 0 {
                            let n = sent.len() as u64;
                            let f = Flit {
                                data: [n, !n ^ (n << 40), 0, 0],
                                head: true,
                                tail: true,
                                vc: vc as u8,
                            };
                            credits[vc] -= 1;
                            sent.push(f);
                            i.flit = Some(f);
                        }
                    } else {
                        if let Some(f) = o.rx.flit {
                            got.push(f);
                            pending_credit |= 1 << f.vc;
                        }
                        i.router_credit = std::mem::take(&mut pending_credit);
                    }
                    i
                });
                ends[e].edge(pl.as_ref(), user_in[e].as_ref()).unwrap();
                if pl_edge[e] {
                    pl_rst[e].edge(rst);
                    pl_cycles[e] += 1;
                    next[e] += pl_ps[e];
                }
            }
            if user_edge {
                user_cycle += 1;
                next[2] += user_ps;
            }
        }
        let ov = [
            ends[0].outputs().rx_overflows,
            ends[1].outputs().rx_overflows,
        ];
        (sent, got, ov)
    }

    #[test]
    fn flits_cross_two_drifting_clock_domains_in_order() {
        let (sent, got, ov) = run_pair(6500, 300);
        assert_eq!(got.len(), 300, "flits delivered");
        for vc in 0..4 {
            let a: Vec<&Flit> = sent.iter().filter(|f| f.vc == vc).collect();
            let b: Vec<&Flit> = got.iter().filter(|f| f.vc == vc).collect();
            assert_eq!(a, b, "VC {vc}: in order, unchanged");
        }
        assert_eq!(
            ov,
            [0, 0],
            "a PL clock faster than the user clock never overflows"
        );
    }

    /// A word on every user-clock edge: counted losses at the RX crossing
    /// exactly when the PL clock is slower than the user clock.
    fn overflows(pl_ps: u64, user_ps: u64) -> u32 {
        let link = LinkParams::sized(128, 4, 1, 32);
        let mut e = NodeLinkEnd::new(&link, &AsyncFifoParams::default(), 2).unwrap();
        let (mut tp, mut tu) = (pl_ps, user_ps);
        let mut edges = 0u64;
        while edges < 2000 {
            let t = tp.min(tu);
            let pl = (tp == t).then_some(PlInputs {
                reset: edges < 8,
                ..Default::default()
            });
            let user = (tu == t).then_some(UserInputs {
                rst: edges < 8,
                tx_ready: true,
                rx_word: Some(PhyWord {
                    data: edges,
                    ctrl: false,
                }),
            });
            e.edge(pl.as_ref(), user.as_ref()).unwrap();
            if tp == t {
                tp += pl_ps;
            }
            if tu == t {
                tu += user_ps;
                edges += 1;
            }
        }
        e.outputs().rx_overflows
    }

    #[test]
    fn rx_crossing_overflows_only_with_a_slower_pl_clock() {
        assert!(overflows(6400, 6206) > 0);
        assert_eq!(overflows(6200, 6206), 0);
        assert!(rx_crossing_can_overflow(1e6 / 6400.0, 1e6 / 6206.0));
        assert!(!rx_crossing_can_overflow(1e6 / 6200.0, 1e6 / 6206.0));
    }
}
