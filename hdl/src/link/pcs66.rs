//! `pcs66`: a thin 64B/66B PCS between the link layer's PHY words
//! (`PhyWord { data, ctrl }`) and a raw GTH transceiver in 64B/66B gearbox
//! mode, in rust-hdl. The spec, the standard facts (IEEE 802.3 clause 49:
//! sync headers, scrambler x^58 + x^39 + 1, block lock) and what is
//! simplified are in the golden model's doc, `exanet_sim::link::pcs`;
//! every constant here (header codes, taps, lock thresholds, scrambler
//! seed) is taken from it.
//!
//! Ports (top module `exanet_pcs66_sw<slip_wait>`), one clock for both
//! halves:
//! - `clock`; `reset` (synchronous: scrambler to its seed, unlocked,
//!   counters to 0);
//! - TX from the link layer: `tx_valid`, `tx_data[64]`, `tx_ctrl`;
//! - TX to the GTH gearbox: `gt_tx_valid`, `gt_txheader[2]`,
//!   `gt_txdata[64]` (scrambled), registered: one cycle after the word;
//! - RX from the GTH gearbox: `gt_rx_valid` (RXDATAVALID & RXHEADERVALID),
//!   `gt_rxheader[2]`, `gt_rxdata[64]`;
//! - RX to the link layer, registered (one cycle after the block):
//!   `rx_valid`, `rx_data[64]` (descrambled), `rx_ctrl`; `block_lock`;
//!   `gt_rxslip` (one-cycle RXGEARBOXSLIP request); counters
//!   `cnt_invalid_headers[32]` (invalid headers while locked, each one a
//!   dropped word) and `cnt_lock_losses[32]` (both wrap).
//!
//! Latency: 1 cycle TX, 1 cycle RX (plus the GTH and the cable).
//!
//! Structure: the 64-bit parallel scrambler is the unrolled recursion
//! `x ^ (x << 39) ^ (x << 58)` (see `exanet_sim::link::pcs::scramble`),
//! two XOR levels; the descrambler one level. The lock machine is a 7-bit
//! header count, a 5-bit invalid count and an 8-bit slip-wait timer.
//!
//! Parameters ([`PcsParams`]): `slip_wait`, cycles after a slip during
//! which headers are not tested, 1..=255.

use crate::emit::{emit, Emitted};
use anyhow::Result;
pub use exanet_sim::link::pcs::PcsParams;
use exanet_sim::link::pcs::{
    HDR_CTRL, HDR_DATA, LOCK_HEADERS, LOSS_INVALID, SCRAMBLER_SEED, TAP_A, TAP_B,
};
use rust_hdl::prelude::*;

/// The PCS (TX and RX halves).
#[derive(LogicBlock)]
pub struct Pcs66 {
    /// Clock (TX and RX user clock).
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// A word from the link layer.
    pub tx_valid: Signal<In, bool>,
    /// Its 64 bits.
    pub tx_data: Signal<In, Bits<64>>,
    /// It is a control word.
    pub tx_ctrl: Signal<In, bool>,
    /// A block for the TX gearbox.
    pub gt_tx_valid: Signal<Out, bool>,
    /// TXHEADER.
    pub gt_txheader: Signal<Out, Bits<2>>,
    /// TXDATA (scrambled).
    pub gt_txdata: Signal<Out, Bits<64>>,
    /// A block from the RX gearbox.
    pub gt_rx_valid: Signal<In, bool>,
    /// RXHEADER.
    pub gt_rxheader: Signal<In, Bits<2>>,
    /// RXDATA (scrambled).
    pub gt_rxdata: Signal<In, Bits<64>>,
    /// A word for the link layer.
    pub rx_valid: Signal<Out, bool>,
    /// Its 64 bits.
    pub rx_data: Signal<Out, Bits<64>>,
    /// It is a control word.
    pub rx_ctrl: Signal<Out, bool>,
    /// Block lock.
    pub block_lock: Signal<Out, bool>,
    /// RXGEARBOXSLIP request.
    pub gt_rxslip: Signal<Out, bool>,
    /// Invalid headers while locked.
    pub cnt_invalid_headers: Signal<Out, Bits<32>>,
    /// Lock losses.
    pub cnt_lock_losses: Signal<Out, Bits<32>>,
    // TX state.
    scr: DFFWithInit<Bits<64>>,
    t_valid: DFF<bool>,
    t_header: DFF<Bits<2>>,
    t_data: DFF<Bits<64>>,
    tx_x: Signal<Local, Bits<64>>,
    tx_s: Signal<Local, Bits<64>>,
    // RX state.
    hist: DFF<Bits<64>>,
    lock: DFF<bool>,
    sh_cnt: DFF<Bits<7>>,
    invalid: DFF<Bits<5>>,
    slip_timer: DFF<Bits<8>>,
    r_valid: DFF<bool>,
    r_data: DFF<Bits<64>>,
    r_ctrl: DFF<bool>,
    r_slip: DFF<bool>,
    n_invalid: DFF<Bits<32>>,
    n_loss: DFF<Bits<32>>,
    desc: Signal<Local, Bits<64>>,
    ok: Signal<Local, bool>,
    waiting: Signal<Local, bool>,
    cnt1: Signal<Local, Bits<7>>,
    inv1: Signal<Local, Bits<5>>,
    // Constants, all from the golden model.
    hdr_data: Constant<Bits<2>>,
    hdr_ctrl: Constant<Bits<2>>,
    hdr_none: Constant<Bits<2>>,
    seed: Constant<Bits<64>>,
    zero64: Constant<Bits<64>>,
    tap_a: Constant<Bits<7>>,
    tap_b: Constant<Bits<7>>,
    rest_a: Constant<Bits<7>>,
    rest_b: Constant<Bits<7>>,
    lock_headers: Constant<Bits<7>>,
    zero7: Constant<Bits<7>>,
    one7: Constant<Bits<7>>,
    loss_invalid: Constant<Bits<5>>,
    zero5: Constant<Bits<5>>,
    one5: Constant<Bits<5>>,
    slip_wait: Constant<Bits<8>>,
    zero8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    zero32: Constant<Bits<32>>,
    one32: Constant<Bits<32>>,
}

impl Pcs66 {
    fn new(p: &PcsParams) -> Self {
        Pcs66 {
            clock: Default::default(),
            reset: Default::default(),
            tx_valid: Default::default(),
            tx_data: Default::default(),
            tx_ctrl: Default::default(),
            gt_tx_valid: Default::default(),
            gt_txheader: Default::default(),
            gt_txdata: Default::default(),
            gt_rx_valid: Default::default(),
            gt_rxheader: Default::default(),
            gt_rxdata: Default::default(),
            rx_valid: Default::default(),
            rx_data: Default::default(),
            rx_ctrl: Default::default(),
            block_lock: Default::default(),
            gt_rxslip: Default::default(),
            cnt_invalid_headers: Default::default(),
            cnt_lock_losses: Default::default(),
            scr: DFFWithInit::new(bits(SCRAMBLER_SEED)),
            t_valid: Default::default(),
            t_header: Default::default(),
            t_data: Default::default(),
            tx_x: Default::default(),
            tx_s: Default::default(),
            hist: Default::default(),
            lock: Default::default(),
            sh_cnt: Default::default(),
            invalid: Default::default(),
            slip_timer: Default::default(),
            r_valid: Default::default(),
            r_data: Default::default(),
            r_ctrl: Default::default(),
            r_slip: Default::default(),
            n_invalid: Default::default(),
            n_loss: Default::default(),
            desc: Default::default(),
            ok: Default::default(),
            waiting: Default::default(),
            cnt1: Default::default(),
            inv1: Default::default(),
            hdr_data: Constant::new(bits(HDR_DATA as u64)),
            hdr_ctrl: Constant::new(bits(HDR_CTRL as u64)),
            hdr_none: Constant::new(bits(0)),
            seed: Constant::new(bits(SCRAMBLER_SEED)),
            zero64: Constant::new(bits(0)),
            tap_a: Constant::new(bits(TAP_A as u64)),
            tap_b: Constant::new(bits(TAP_B as u64)),
            rest_a: Constant::new(bits(64 - TAP_A as u64)),
            rest_b: Constant::new(bits(64 - TAP_B as u64)),
            lock_headers: Constant::new(bits(LOCK_HEADERS as u64)),
            zero7: Constant::new(bits(0)),
            one7: Constant::new(bits(1)),
            loss_invalid: Constant::new(bits(LOSS_INVALID as u64)),
            zero5: Constant::new(bits(0)),
            one5: Constant::new(bits(1)),
            slip_wait: Constant::new(bits(p.slip_wait as u64)),
            zero8: Constant::new(bits(0)),
            one8: Constant::new(bits(1)),
            zero32: Constant::new(bits(0)),
            one32: Constant::new(bits(1)),
        }
    }
}

impl Logic for Pcs66 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, scr, t_valid, t_header, t_data, hist, lock, sh_cnt, invalid, slip_timer,
            r_valid, r_data, r_ctrl, r_slip, n_invalid, n_loss
        );
        // TX: scramble (unrolled recursion, see the module doc).
        self.tx_x.next = self.tx_data.val()
            ^ (self.scr.q.val() >> self.rest_a.val())
            ^ (self.scr.q.val() >> self.rest_b.val());
        self.tx_s.next = self.tx_x.val()
            ^ (self.tx_x.val() << self.tap_a.val())
            ^ (self.tx_x.val() << self.tap_b.val());
        self.t_valid.d.next = self.tx_valid.val();
        if self.tx_valid.val() {
            self.scr.d.next = self.tx_s.val();
            self.t_data.d.next = self.tx_s.val();
            self.t_header.d.next = self.hdr_data.val();
            if self.tx_ctrl.val() {
                self.t_header.d.next = self.hdr_ctrl.val();
            }
        }
        // RX: descramble and lock.
        self.desc.next = self.gt_rxdata.val()
            ^ ((self.gt_rxdata.val() << self.tap_a.val())
                | (self.hist.q.val() >> self.rest_a.val()))
            ^ ((self.gt_rxdata.val() << self.tap_b.val())
                | (self.hist.q.val() >> self.rest_b.val()));
        self.ok.next = (self.gt_rxheader.val() == self.hdr_data.val())
            | (self.gt_rxheader.val() == self.hdr_ctrl.val());
        self.waiting.next = self.slip_timer.q.val() != self.zero8.val();
        self.cnt1.next = self.sh_cnt.q.val() + self.one7.val();
        self.inv1.next = self.invalid.q.val();
        if !self.ok.val() {
            self.inv1.next = self.invalid.q.val() + self.one5.val();
        }
        self.r_valid.d.next = false;
        self.r_slip.d.next = false;
        if self.waiting.val() {
            self.slip_timer.d.next = self.slip_timer.q.val() - self.one8.val();
        }
        if self.gt_rx_valid.val() {
            self.hist.d.next = self.gt_rxdata.val();
            if !self.waiting.val() {
                if self.lock.q.val() {
                    if self.ok.val() {
                        self.r_valid.d.next = true;
                        self.r_data.d.next = self.desc.val();
                        self.r_ctrl.d.next = self.gt_rxheader.val() == self.hdr_ctrl.val();
                    } else {
                        self.n_invalid.d.next = self.n_invalid.q.val() + self.one32.val();
                    }
                    self.sh_cnt.d.next = self.cnt1.val();
                    self.invalid.d.next = self.inv1.val();
                    if self.inv1.val() == self.loss_invalid.val() {
                        self.lock.d.next = false;
                        self.n_loss.d.next = self.n_loss.q.val() + self.one32.val();
                        self.r_slip.d.next = true;
                        self.sh_cnt.d.next = self.zero7.val();
                        self.invalid.d.next = self.zero5.val();
                        self.slip_timer.d.next = self.slip_wait.val();
                    } else if self.cnt1.val() == self.lock_headers.val() {
                        self.sh_cnt.d.next = self.zero7.val();
                        self.invalid.d.next = self.zero5.val();
                    }
                } else if self.ok.val() {
                    self.sh_cnt.d.next = self.cnt1.val();
                    if self.cnt1.val() == self.lock_headers.val() {
                        self.lock.d.next = true;
                        self.sh_cnt.d.next = self.zero7.val();
                        self.invalid.d.next = self.zero5.val();
                    }
                } else {
                    self.r_slip.d.next = true;
                    self.sh_cnt.d.next = self.zero7.val();
                    self.invalid.d.next = self.zero5.val();
                    self.slip_timer.d.next = self.slip_wait.val();
                }
            }
        }
        if self.reset.val() {
            self.scr.d.next = self.seed.val();
            self.t_valid.d.next = false;
            self.t_header.d.next = self.hdr_none.val();
            self.t_data.d.next = self.zero64.val();
            self.hist.d.next = self.zero64.val();
            self.lock.d.next = false;
            self.sh_cnt.d.next = self.zero7.val();
            self.invalid.d.next = self.zero5.val();
            self.slip_timer.d.next = self.zero8.val();
            self.r_valid.d.next = false;
            self.r_data.d.next = self.zero64.val();
            self.r_ctrl.d.next = false;
            self.r_slip.d.next = false;
            self.n_invalid.d.next = self.zero32.val();
            self.n_loss.d.next = self.zero32.val();
        }
        self.gt_tx_valid.next = self.t_valid.q.val();
        self.gt_txheader.next = self.t_header.q.val();
        self.gt_txdata.next = self.t_data.q.val();
        self.rx_valid.next = self.r_valid.q.val();
        self.rx_data.next = self.r_data.q.val();
        self.rx_ctrl.next = self.r_ctrl.q.val();
        self.block_lock.next = self.lock.q.val();
        self.gt_rxslip.next = self.r_slip.q.val();
        self.cnt_invalid_headers.next = self.n_invalid.q.val();
        self.cnt_lock_losses.next = self.n_loss.q.val();
    }
}

/// Top module name.
pub fn pcs66_top_name(p: &PcsParams) -> String {
    format!("exanet_pcs66_sw{}", p.slip_wait)
}

/// Emit the PCS (parameters checked, errors name the key).
pub fn emit_pcs66(p: &PcsParams) -> Result<Emitted> {
    p.validate()?;
    // The RTL's counters hold these (7-bit header count, 5-bit invalid count).
    anyhow::ensure!(
        LOCK_HEADERS < 128 && LOSS_INVALID < 32 && TAP_A < TAP_B && TAP_B < 64,
        "pcs66: the golden lock thresholds or taps outgrew the RTL's counters"
    );
    emit(&mut Pcs66::new(p), &pcs66_top_name(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    #[test]
    fn emits_lint_clean_verilog() {
        for sw in [1, 32, 255] {
            let e = emit_pcs66(&PcsParams { slip_wait: sw }).unwrap();
            assert_eq!(e.top, format!("exanet_pcs66_sw{sw}"));
            assert_lint_clean(&e);
        }
        let e = emit_pcs66(&PcsParams { slip_wait: 0 }).unwrap_err();
        assert!(e.to_string().contains("pcs66.slip_wait = 0"), "{e}");
    }
}
