//! `link_status`: the status and counters of a router's links over
//! AXI4-Lite (golden model and register map:
//! `exanet_sim::link::status`), in rust-hdl.
//!
//! Ports (top module `exanet_link_status_n<links>`):
//! - `clock`; `reset` (synchronous);
//! - per link `l`, inputs `link_state[2·N]` (link `l` in bits 2l+1..2l: its
//!   `link_rx`'s `st_state`) and `link_counters[480·N]` (link `l`'s fifteen
//!   counter registers in map order, `COUNTER_REGS`, 32 bits each, counter
//!   `k` of link `l` at bit `(15l + k)·32`; where each comes from is
//!   [`counter_source`]);
//! - AXI4-Lite slave: `s_araddr[32]`, `s_arvalid`, `s_arready`, `s_rdata[32]`,
//!   `s_rresp[2]`, `s_rvalid`, `s_rready`; `s_awvalid`, `s_awready`,
//!   `s_wvalid`, `s_wready`, `s_bresp[2]`, `s_bvalid`, `s_bready` (no
//!   address or data on the write channel: every write is refused).
//!
//! Decoding: word `w = araddr >> 2`, link `l = w >> 4`, register `r = w & 15`;
//! `r = 0` is the state, otherwise counter `r - 1` of link `l`, i.e. counter
//! index `15l + r - 1 = w - l - 1` of the flat bus. Valid when `araddr` is
//! word-aligned and `w < 16·N`; else SLVERR and 0.

use crate::emit::{emit, Emitted};
use crate::router::network::{RX_COUNTERS, TX_COUNTERS};
use anyhow::Result;
use exanet_sim::link::status::{Reg, Source};
use exanet_sim::link::status::{
    COUNTER_REGS, MAX_LINKS, REGS, REGS_PER_LINK, RESP_OKAY, RESP_SLVERR,
};

/// Bits of `word` that number the register inside a link (the RTL's
/// `word >> 4`; [`check_map`] ties it to the golden stride).
const REG_BITS: usize = 4;
/// Counter bits per link on `link_counters`.
pub const COUNTER_BITS_PER_LINK: usize = 32 * (REGS_PER_LINK - 1);
use rust_hdl::prelude::*;

/// The block for `N` links (`S` = 2·N state bits, `C` = 480·N counter bits).
#[derive(LogicBlock)]
pub struct LinkStatusRtl<const S: usize, const C: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// Every link's state, 2 bits each.
    pub link_state: Signal<In, Bits<S>>,
    /// Every link's counters, 15 × 32 bits each.
    pub link_counters: Signal<In, Bits<C>>,
    /// Read address.
    pub s_araddr: Signal<In, Bits<32>>,
    /// Read address valid.
    pub s_arvalid: Signal<In, bool>,
    /// Read address taken.
    pub s_arready: Signal<Out, bool>,
    /// Read data.
    pub s_rdata: Signal<Out, Bits<32>>,
    /// Read response.
    pub s_rresp: Signal<Out, Bits<2>>,
    /// Read response valid.
    pub s_rvalid: Signal<Out, bool>,
    /// Read response taken.
    pub s_rready: Signal<In, bool>,
    /// Write address valid.
    pub s_awvalid: Signal<In, bool>,
    /// Write address taken.
    pub s_awready: Signal<Out, bool>,
    /// Write data valid.
    pub s_wvalid: Signal<In, bool>,
    /// Write data taken.
    pub s_wready: Signal<Out, bool>,
    /// Write response.
    pub s_bresp: Signal<Out, Bits<2>>,
    /// Write response valid.
    pub s_bvalid: Signal<Out, bool>,
    /// Write response taken.
    pub s_bready: Signal<In, bool>,
    rvalid: DFF<bool>,
    rdata: DFF<Bits<32>>,
    rresp: DFF<Bits<2>>,
    bvalid: DFF<bool>,
    word: Signal<Local, Bits<32>>,
    link: Signal<Local, Bits<32>>,
    ok: Signal<Local, bool>,
    wr: Signal<Local, bool>,
    ar: Signal<Local, bool>,
    st: Signal<Local, Bits<2>>,
    st32: Signal<Local, Bits<32>>,
    words: Constant<Bits<32>>,
    reg_mask: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    two: Constant<Bits<32>>,
    three: Constant<Bits<32>>,
    zero: Constant<Bits<32>>,
    resp_okay: Constant<Bits<2>>,
    resp_slverr: Constant<Bits<2>>,
}

impl<const S: usize, const C: usize> LinkStatusRtl<S, C> {
    fn new() -> Self {
        let links = S / 2;
        LinkStatusRtl {
            clock: Default::default(),
            reset: Default::default(),
            link_state: Default::default(),
            link_counters: Default::default(),
            s_araddr: Default::default(),
            s_arvalid: Default::default(),
            s_arready: Default::default(),
            s_rdata: Default::default(),
            s_rresp: Default::default(),
            s_rvalid: Default::default(),
            s_rready: Default::default(),
            s_awvalid: Default::default(),
            s_awready: Default::default(),
            s_wvalid: Default::default(),
            s_wready: Default::default(),
            s_bresp: Default::default(),
            s_bvalid: Default::default(),
            s_bready: Default::default(),
            rvalid: Default::default(),
            rdata: Default::default(),
            rresp: Default::default(),
            bvalid: Default::default(),
            word: Default::default(),
            link: Default::default(),
            ok: Default::default(),
            wr: Default::default(),
            ar: Default::default(),
            st: Default::default(),
            st32: Default::default(),
            words: Constant::new(bits((links * REGS_PER_LINK) as u64)),
            reg_mask: Constant::new(bits((REGS_PER_LINK - 1) as u64)),
            one: Constant::new(bits(1)),
            two: Constant::new(bits(2)),
            three: Constant::new(bits(3)),
            zero: Constant::new(bits(0)),
            resp_okay: Constant::new(bits(RESP_OKAY as u64)),
            resp_slverr: Constant::new(bits(RESP_SLVERR as u64)),
        }
    }
}

impl<const S: usize, const C: usize> Logic for LinkStatusRtl<S, C> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rvalid, rdata, rresp, bvalid);
        self.word.next = self.s_araddr.val() >> 2;
        self.link.next = self.word.val() >> 4;
        self.ok.next = !self.s_araddr.val().get_bit(0)
            & !self.s_araddr.val().get_bit(1)
            & (self.word.val() < self.words.val());
        self.st.next = self
            .link_state
            .val()
            .get_bits::<2>((self.link.val() << 1).index());
        // The state zero-extended to 32 bits.
        self.st32.next = self.zero.val();
        if self.st.val().get_bit(0) {
            self.st32.next = self.one.val();
        }
        if self.st.val().get_bit(1) {
            self.st32.next = self.two.val();
            if self.st.val().get_bit(0) {
                self.st32.next = self.three.val();
            }
        }
        self.ar.next = self.s_arvalid.val() & !self.rvalid.q.val();
        self.wr.next = self.s_awvalid.val() & self.s_wvalid.val() & !self.bvalid.q.val();
        if self.s_rready.val() {
            self.rvalid.d.next = false;
        }
        if self.ar.val() {
            self.rvalid.d.next = true;
            if !self.ok.val() {
                self.rdata.d.next = self.zero.val();
                self.rresp.d.next = self.resp_slverr.val();
            } else if (self.word.val() & self.reg_mask.val()) == self.zero.val() {
                self.rdata.d.next = self.st32.val();
                self.rresp.d.next = self.resp_okay.val();
            } else {
                self.rdata.d.next = self.link_counters.val().get_bits::<32>(
                    ((self.word.val() - self.link.val() - self.one.val()) << 5).index(),
                );
                self.rresp.d.next = self.resp_okay.val();
            }
        }
        if self.s_bready.val() {
            self.bvalid.d.next = false;
        }
        if self.wr.val() {
            self.bvalid.d.next = true;
        }
        if self.reset.val() {
            self.rvalid.d.next = false;
            self.bvalid.d.next = false;
            self.rdata.d.next = self.zero.val();
            self.rresp.d.next = self.resp_okay.val();
        }
        self.s_arready.next = !self.rvalid.q.val();
        self.s_rvalid.next = self.rvalid.q.val();
        self.s_rdata.next = self.rdata.q.val();
        self.s_rresp.next = self.rresp.q.val();
        self.s_awready.next = self.wr.val();
        self.s_wready.next = self.wr.val();
        self.s_bvalid.next = self.bvalid.q.val();
        self.s_bresp.next = self.resp_okay.val();
        if self.bvalid.q.val() {
            self.s_bresp.next = self.resp_slverr.val();
        }
    }
}

/// One input of a status register's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterPort {
    /// `link_tx`'s `cnt_<name>` (a name of [`TX_COUNTERS`]).
    Tx(&'static str),
    /// `link_rx`'s `cnt_<name>` (a name of [`RX_COUNTERS`]).
    Rx(&'static str),
    /// The node's RX clock-crossing overflow counter, in the PL domain.
    Crossing,
}

/// The counter ports whose sum (32-bit, wrapping) is status register
/// `reg`, from the golden [`Reg::source`]: for [`Source::Link`] every link
/// half that has a counter of the register's own name ([`Reg::name`];
/// `bad_acks` and `overflows` are counted by both halves, as the golden
/// `LinkCounters::merged` sums them), for [`Source::Crossing`] the node's
/// crossing counter. No second table to drift. The state register has none.
pub fn counter_source(reg: Reg) -> Result<Vec<CounterPort>> {
    let n = reg.name();
    match reg.source() {
        Source::State => anyhow::bail!("link_status register `{n}`: the state, not a counter"),
        Source::Crossing => Ok(vec![CounterPort::Crossing]),
        Source::Link => {
            let mut v = Vec::new();
            if let Some(c) = TX_COUNTERS.iter().find(|&&c| c == n) {
                v.push(CounterPort::Tx(c));
            }
            if let Some(c) = RX_COUNTERS.iter().find(|&&c| c == n) {
                v.push(CounterPort::Rx(c));
            }
            anyhow::ensure!(
                !v.is_empty(),
                "link_status register `{n}`: must be a counter of link_tx \
                 ({TX_COUNTERS:?}) or link_rx ({RX_COUNTERS:?})"
            );
            Ok(v)
        }
    }
}

/// Top module name for `links` links.
pub fn link_status_top_name(links: usize) -> String {
    format!("exanet_link_status_n{links}")
}

/// The register map this RTL decodes must be the golden one: state at
/// register 0, the counters after it in `COUNTER_REGS` order, `2^REG_BITS`
/// registers per link.
fn check_map() -> Result<()> {
    let ok = REGS[0] == Reg::State && REGS[1..] == COUNTER_REGS && REGS_PER_LINK == 1 << REG_BITS;
    anyhow::ensure!(
        ok,
        "link_status: the golden register map changed; the RTL decode assumes state, then {} \
         counters, {} registers per link",
        (1 << REG_BITS) - 1,
        1 << REG_BITS
    );
    Ok(())
}

/// Emit the status block for `links` links (1..=16).
pub fn emit_link_status(links: usize) -> Result<Emitted> {
    check_map()?;
    let top = link_status_top_name(links);
    macro_rules! go {
        ($($n:literal),*) => {
            match links {
                $($n => emit(&mut LinkStatusRtl::<{ 2 * $n }, { COUNTER_BITS_PER_LINK * $n }>::new(), &top),)*
                _ => anyhow::bail!("link_status.links = {links}: must be 1..={MAX_LINKS}"),
            }
        };
    }
    go!(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    #[test]
    fn emits_lint_clean_verilog() {
        for n in [1, 6, 16] {
            let e = emit_link_status(n).unwrap();
            assert_eq!(e.top, link_status_top_name(n));
            assert_lint_clean(&e);
        }
        let e = emit_link_status(17).unwrap_err().to_string();
        assert!(e.contains("link_status.links = 17"), "{e}");
    }

    /// Every counter register is the sum of its counter ports, and the
    /// ports' golden values (`counter_values`) give the register's golden
    /// value (`Reg::value` of the merged counters).
    #[test]
    fn counter_sources_agree_with_the_golden_values() {
        use exanet_sim::link::status::LinkSample;
        use exanet_sim::link::{LinkCounters, LinkState};
        let mut t = LinkCounters::default();
        let mut r = LinkCounters::default();
        // Distinct values everywhere, so a wrong source shows.
        for (k, c) in [&mut t, &mut r].into_iter().enumerate() {
            let b = 100 * (k as u64 + 1);
            *c = LinkCounters {
                frames_sent: b + 1,
                frames_received: b + 2,
                crc_errors: b + 3,
                ctrl_crc_errors: b + 4,
                seq_errors: b + 5,
                duplicates: b + 6,
                retransmissions: b + 7,
                timeouts: b + 8,
                link_downs: b + 9,
                bad_acks: b + 10,
                training_errors: b + 11,
                overflows: b + 12,
                words_replayed: b + 13,
                ctrl_sent: b + 14,
            };
        }
        // The golden link ends count each counter only in the halves that
        // have a port for it.
        t.frames_received = 0;
        t.crc_errors = 0;
        t.ctrl_crc_errors = 0;
        t.link_downs = 0;
        t.seq_errors = 0;
        t.duplicates = 0;
        t.training_errors = 0;
        r.frames_sent = 0;
        r.retransmissions = 0;
        r.timeouts = 0;
        r.words_replayed = 0;
        r.ctrl_sent = 0;
        let (tv, rv) = crate::router::network::counter_values(&t, &r);
        let s = LinkSample {
            state: LinkState::Up,
            counters: t.merged(&r),
            rx_overflows: 77,
        };
        let e = counter_source(Reg::State).unwrap_err().to_string();
        assert!(e.contains("`state`"), "{e}");
        let mut summed = 0;
        for reg in COUNTER_REGS {
            let ports = counter_source(reg).unwrap();
            summed += (ports.len() > 1) as usize;
            let v: u64 = ports
                .iter()
                .map(|p| match p {
                    CounterPort::Tx(n) => tv[TX_COUNTERS.iter().position(|c| c == n).unwrap()],
                    CounterPort::Rx(n) => rv[RX_COUNTERS.iter().position(|c| c == n).unwrap()],
                    CounterPort::Crossing => 77,
                })
                .sum();
            assert_eq!(v as u32, reg.value(&s), "{reg:?}");
        }
        assert_eq!(summed, 2, "bad_acks and overflows come from both halves");
        // Every counter port feeds exactly one register.
        let ports: Vec<_> = COUNTER_REGS
            .iter()
            .flat_map(|r| counter_source(*r).unwrap())
            .collect();
        assert_eq!(ports.len(), TX_COUNTERS.len() + RX_COUNTERS.len() + 1);
        for (k, p) in ports.iter().enumerate() {
            assert!(!ports[k + 1..].contains(p), "{p:?} feeds two registers");
        }
    }
}
