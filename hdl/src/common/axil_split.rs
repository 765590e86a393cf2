//! `axil_split`: one AXI4-Lite slave port to two AXI4-Lite master ports,
//! split by address (golden model and spec:
//! `exanet_sim::common::axil_split`), in rust-hdl.
//!
//! Ports (top module `exanet_axil_split_a<addr_bits>_s<split in hex>`):
//! - `clock`; `reset` (synchronous: both directions back to *accept*,
//!   held values cleared);
//! - slave `s_*`: `s_awaddr[A]`, `s_awprot[3]`, `s_awvalid`, `s_awready`,
//!   `s_wdata[32]`, `s_wstrb[4]`, `s_wvalid`, `s_wready`, `s_bresp[2]`,
//!   `s_bvalid`, `s_bready`, `s_araddr[A]`, `s_arprot[3]`, `s_arvalid`,
//!   `s_arready`, `s_rdata[32]`, `s_rresp[2]`, `s_rvalid`, `s_rready`;
//! - masters `m0_*` (addresses below `split`, unchanged) and `m1_*`
//!   (addresses at or above `split`, relative to it): the same channels in
//!   the other direction, `A`-bit addresses.
//!
//! Latency: every output is registered state (no input-to-output path): a
//! request reaches the master port one cycle after its last slave
//! handshake, a response the slave port one cycle after its master
//! handshake; one write and one read in flight.
//!
//! Each direction is a 2-bit phase (accept, issue, wait, respond) that
//! only ever steps by one, wrapping from respond to accept.
//!
//! Parameters ([`AxilSplitParams`]): `addr_bits` 12..=32 and `split`, with
//! `2^addr_bits - split` a power of two.

use crate::emit::{emit, Emitted};
use anyhow::{bail, Result};
pub use exanet_sim::common::axil_split::AxilSplitParams;
use rust_hdl::prelude::*;

/// The split for `A`-bit addresses.
#[derive(LogicBlock)]
pub struct AxilSplit<const A: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// Slave AW address.
    pub s_awaddr: Signal<In, Bits<A>>,
    /// Slave AW protection.
    pub s_awprot: Signal<In, Bits<3>>,
    /// Slave AW valid.
    pub s_awvalid: Signal<In, bool>,
    /// Slave W data.
    pub s_wdata: Signal<In, Bits<32>>,
    /// Slave W strobes.
    pub s_wstrb: Signal<In, Bits<4>>,
    /// Slave W valid.
    pub s_wvalid: Signal<In, bool>,
    /// Slave B taken.
    pub s_bready: Signal<In, bool>,
    /// Slave AR address.
    pub s_araddr: Signal<In, Bits<A>>,
    /// Slave AR protection.
    pub s_arprot: Signal<In, Bits<3>>,
    /// Slave AR valid.
    pub s_arvalid: Signal<In, bool>,
    /// Slave R taken.
    pub s_rready: Signal<In, bool>,
    /// Slave AW taken.
    pub s_awready: Signal<Out, bool>,
    /// Slave W taken.
    pub s_wready: Signal<Out, bool>,
    /// Slave B response.
    pub s_bresp: Signal<Out, Bits<2>>,
    /// Slave B valid.
    pub s_bvalid: Signal<Out, bool>,
    /// Slave AR taken.
    pub s_arready: Signal<Out, bool>,
    /// Slave R data.
    pub s_rdata: Signal<Out, Bits<32>>,
    /// Slave R response.
    pub s_rresp: Signal<Out, Bits<2>>,
    /// Slave R valid.
    pub s_rvalid: Signal<Out, bool>,
    /// m0 AW address.
    pub m0_awaddr: Signal<Out, Bits<A>>,
    /// m0 AW protection.
    pub m0_awprot: Signal<Out, Bits<3>>,
    /// m0 AW valid.
    pub m0_awvalid: Signal<Out, bool>,
    /// m0 W data.
    pub m0_wdata: Signal<Out, Bits<32>>,
    /// m0 W strobes.
    pub m0_wstrb: Signal<Out, Bits<4>>,
    /// m0 W valid.
    pub m0_wvalid: Signal<Out, bool>,
    /// m0 B taken.
    pub m0_bready: Signal<Out, bool>,
    /// m0 AR address.
    pub m0_araddr: Signal<Out, Bits<A>>,
    /// m0 AR protection.
    pub m0_arprot: Signal<Out, Bits<3>>,
    /// m0 AR valid.
    pub m0_arvalid: Signal<Out, bool>,
    /// m0 R taken.
    pub m0_rready: Signal<Out, bool>,
    /// m0 AW taken.
    pub m0_awready: Signal<In, bool>,
    /// m0 W taken.
    pub m0_wready: Signal<In, bool>,
    /// m0 B response.
    pub m0_bresp: Signal<In, Bits<2>>,
    /// m0 B valid.
    pub m0_bvalid: Signal<In, bool>,
    /// m0 AR taken.
    pub m0_arready: Signal<In, bool>,
    /// m0 R data.
    pub m0_rdata: Signal<In, Bits<32>>,
    /// m0 R response.
    pub m0_rresp: Signal<In, Bits<2>>,
    /// m0 R valid.
    pub m0_rvalid: Signal<In, bool>,
    /// m1 AW address.
    pub m1_awaddr: Signal<Out, Bits<A>>,
    /// m1 AW protection.
    pub m1_awprot: Signal<Out, Bits<3>>,
    /// m1 AW valid.
    pub m1_awvalid: Signal<Out, bool>,
    /// m1 W data.
    pub m1_wdata: Signal<Out, Bits<32>>,
    /// m1 W strobes.
    pub m1_wstrb: Signal<Out, Bits<4>>,
    /// m1 W valid.
    pub m1_wvalid: Signal<Out, bool>,
    /// m1 B taken.
    pub m1_bready: Signal<Out, bool>,
    /// m1 AR address.
    pub m1_araddr: Signal<Out, Bits<A>>,
    /// m1 AR protection.
    pub m1_arprot: Signal<Out, Bits<3>>,
    /// m1 AR valid.
    pub m1_arvalid: Signal<Out, bool>,
    /// m1 R taken.
    pub m1_rready: Signal<Out, bool>,
    /// m1 AW taken.
    pub m1_awready: Signal<In, bool>,
    /// m1 W taken.
    pub m1_wready: Signal<In, bool>,
    /// m1 B response.
    pub m1_bresp: Signal<In, Bits<2>>,
    /// m1 B valid.
    pub m1_bvalid: Signal<In, bool>,
    /// m1 AR taken.
    pub m1_arready: Signal<In, bool>,
    /// m1 R data.
    pub m1_rdata: Signal<In, Bits<32>>,
    /// m1 R response.
    pub m1_rresp: Signal<In, Bits<2>>,
    /// m1 R valid.
    pub m1_rvalid: Signal<In, bool>,
    wph: DFF<Bits<2>>,
    aw_done: DFF<bool>,
    w_done: DFF<bool>,
    w_m1: DFF<bool>,
    waddr: DFF<Bits<A>>,
    wprot: DFF<Bits<3>>,
    wdata: DFF<Bits<32>>,
    wstrb: DFF<Bits<4>>,
    bresp: DFF<Bits<2>>,
    rph: DFF<Bits<2>>,
    r_m1: DFF<bool>,
    raddr: DFF<Bits<A>>,
    rprot: DFF<Bits<3>>,
    rdata: DFF<Bits<32>>,
    rresp: DFF<Bits<2>>,
    w_acc: Signal<Local, bool>,
    w_iss: Signal<Local, bool>,
    w_wait: Signal<Local, bool>,
    w_resp: Signal<Local, bool>,
    r_acc: Signal<Local, bool>,
    r_iss: Signal<Local, bool>,
    r_wait: Signal<Local, bool>,
    r_resp: Signal<Local, bool>,
    aw_in: Signal<Local, bool>,
    w_in: Signal<Local, bool>,
    aw_out: Signal<Local, bool>,
    w_out: Signal<Local, bool>,
    aw_now: Signal<Local, bool>,
    w_now: Signal<Local, bool>,
    sel_awready: Signal<Local, bool>,
    sel_wready: Signal<Local, bool>,
    sel_bvalid: Signal<Local, bool>,
    sel_bresp: Signal<Local, Bits<2>>,
    sel_arready: Signal<Local, bool>,
    sel_rvalid: Signal<Local, bool>,
    sel_rdata: Signal<Local, Bits<32>>,
    sel_rresp: Signal<Local, Bits<2>>,
    ph_accept: Constant<Bits<2>>,
    ph_issue: Constant<Bits<2>>,
    ph_wait: Constant<Bits<2>>,
    ph_respond: Constant<Bits<2>>,
    ph_step: Constant<Bits<2>>,
    /// Low address bits: `m1`'s address relative to `split`.
    win_mask: Constant<Bits<A>>,
    /// High address bits: all ones exactly at or above `split`.
    top_mask: Constant<Bits<A>>,
    zero_a: Constant<Bits<A>>,
    zero_2: Constant<Bits<2>>,
    zero_3: Constant<Bits<3>>,
    zero_4: Constant<Bits<4>>,
    zero_32: Constant<Bits<32>>,
}

impl<const A: usize> AxilSplit<A> {
    /// The split of `p` (valid, with `p.addr_bits == A`: checked by
    /// [`emit_axil_split`]).
    pub fn new(p: &AxilSplitParams) -> Self {
        assert!(p.validate().is_ok() && p.addr_bits as usize == A);
        let win_mask = p.window() - 1;
        AxilSplit {
            clock: Default::default(),
            reset: Default::default(),
            s_awaddr: Default::default(),
            s_awprot: Default::default(),
            s_awvalid: Default::default(),
            s_wdata: Default::default(),
            s_wstrb: Default::default(),
            s_wvalid: Default::default(),
            s_bready: Default::default(),
            s_araddr: Default::default(),
            s_arprot: Default::default(),
            s_arvalid: Default::default(),
            s_rready: Default::default(),
            s_awready: Default::default(),
            s_wready: Default::default(),
            s_bresp: Default::default(),
            s_bvalid: Default::default(),
            s_arready: Default::default(),
            s_rdata: Default::default(),
            s_rresp: Default::default(),
            s_rvalid: Default::default(),
            m0_awaddr: Default::default(),
            m0_awprot: Default::default(),
            m0_awvalid: Default::default(),
            m0_wdata: Default::default(),
            m0_wstrb: Default::default(),
            m0_wvalid: Default::default(),
            m0_bready: Default::default(),
            m0_araddr: Default::default(),
            m0_arprot: Default::default(),
            m0_arvalid: Default::default(),
            m0_rready: Default::default(),
            m0_awready: Default::default(),
            m0_wready: Default::default(),
            m0_bresp: Default::default(),
            m0_bvalid: Default::default(),
            m0_arready: Default::default(),
            m0_rdata: Default::default(),
            m0_rresp: Default::default(),
            m0_rvalid: Default::default(),
            m1_awaddr: Default::default(),
            m1_awprot: Default::default(),
            m1_awvalid: Default::default(),
            m1_wdata: Default::default(),
            m1_wstrb: Default::default(),
            m1_wvalid: Default::default(),
            m1_bready: Default::default(),
            m1_araddr: Default::default(),
            m1_arprot: Default::default(),
            m1_arvalid: Default::default(),
            m1_rready: Default::default(),
            m1_awready: Default::default(),
            m1_wready: Default::default(),
            m1_bresp: Default::default(),
            m1_bvalid: Default::default(),
            m1_arready: Default::default(),
            m1_rdata: Default::default(),
            m1_rresp: Default::default(),
            m1_rvalid: Default::default(),
            wph: Default::default(),
            aw_done: Default::default(),
            w_done: Default::default(),
            w_m1: Default::default(),
            waddr: Default::default(),
            wprot: Default::default(),
            wdata: Default::default(),
            wstrb: Default::default(),
            bresp: Default::default(),
            rph: Default::default(),
            r_m1: Default::default(),
            raddr: Default::default(),
            rprot: Default::default(),
            rdata: Default::default(),
            rresp: Default::default(),
            w_acc: Default::default(),
            w_iss: Default::default(),
            w_wait: Default::default(),
            w_resp: Default::default(),
            r_acc: Default::default(),
            r_iss: Default::default(),
            r_wait: Default::default(),
            r_resp: Default::default(),
            aw_in: Default::default(),
            w_in: Default::default(),
            aw_out: Default::default(),
            w_out: Default::default(),
            aw_now: Default::default(),
            w_now: Default::default(),
            sel_awready: Default::default(),
            sel_wready: Default::default(),
            sel_bvalid: Default::default(),
            sel_bresp: Default::default(),
            sel_arready: Default::default(),
            sel_rvalid: Default::default(),
            sel_rdata: Default::default(),
            sel_rresp: Default::default(),
            ph_accept: Constant::new(bits(0)),
            ph_issue: Constant::new(bits(1)),
            ph_wait: Constant::new(bits(2)),
            ph_respond: Constant::new(bits(3)),
            ph_step: Constant::new(bits(1)),
            win_mask: Constant::new(bits(win_mask)),
            top_mask: Constant::new(bits(p.addr_mask() & !win_mask)),
            zero_a: Constant::new(bits(0)),
            zero_2: Constant::new(bits(0)),
            zero_3: Constant::new(bits(0)),
            zero_4: Constant::new(bits(0)),
            zero_32: Constant::new(bits(0)),
        }
    }
}

impl<const A: usize> Logic for AxilSplit<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, wph, aw_done, w_done, w_m1, waddr, wprot, wdata, wstrb, bresp, rph, r_m1,
            raddr, rprot, rdata, rresp
        );
        self.w_acc.next = self.wph.q.val() == self.ph_accept.val();
        self.w_iss.next = self.wph.q.val() == self.ph_issue.val();
        self.w_wait.next = self.wph.q.val() == self.ph_wait.val();
        self.w_resp.next = self.wph.q.val() == self.ph_respond.val();
        self.r_acc.next = self.rph.q.val() == self.ph_accept.val();
        self.r_iss.next = self.rph.q.val() == self.ph_issue.val();
        self.r_wait.next = self.rph.q.val() == self.ph_wait.val();
        self.r_resp.next = self.rph.q.val() == self.ph_respond.val();

        // Outputs: registered state only.
        self.s_awready.next = self.w_acc.val() & !self.aw_done.q.val();
        self.s_wready.next = self.w_acc.val() & !self.w_done.q.val();
        self.s_bvalid.next = self.w_resp.val();
        self.s_bresp.next = self.bresp.q.val();
        self.s_arready.next = self.r_acc.val();
        self.s_rvalid.next = self.r_resp.val();
        self.s_rdata.next = self.rdata.q.val();
        self.s_rresp.next = self.rresp.q.val();
        self.m0_awaddr.next = self.waddr.q.val();
        self.m1_awaddr.next = self.waddr.q.val() & self.win_mask.val();
        self.m0_awprot.next = self.wprot.q.val();
        self.m1_awprot.next = self.wprot.q.val();
        self.m0_wdata.next = self.wdata.q.val();
        self.m1_wdata.next = self.wdata.q.val();
        self.m0_wstrb.next = self.wstrb.q.val();
        self.m1_wstrb.next = self.wstrb.q.val();
        self.m0_awvalid.next = self.w_iss.val() & !self.aw_done.q.val() & !self.w_m1.q.val();
        self.m1_awvalid.next = self.w_iss.val() & !self.aw_done.q.val() & self.w_m1.q.val();
        self.m0_wvalid.next = self.w_iss.val() & !self.w_done.q.val() & !self.w_m1.q.val();
        self.m1_wvalid.next = self.w_iss.val() & !self.w_done.q.val() & self.w_m1.q.val();
        self.m0_bready.next = self.w_wait.val() & !self.w_m1.q.val();
        self.m1_bready.next = self.w_wait.val() & self.w_m1.q.val();
        self.m0_araddr.next = self.raddr.q.val();
        self.m1_araddr.next = self.raddr.q.val() & self.win_mask.val();
        self.m0_arprot.next = self.rprot.q.val();
        self.m1_arprot.next = self.rprot.q.val();
        self.m0_arvalid.next = self.r_iss.val() & !self.r_m1.q.val();
        self.m1_arvalid.next = self.r_iss.val() & self.r_m1.q.val();
        self.m0_rready.next = self.r_wait.val() & !self.r_m1.q.val();
        self.m1_rready.next = self.r_wait.val() & self.r_m1.q.val();

        // The chosen side's inputs.
        self.sel_awready.next = self.m0_awready.val();
        self.sel_wready.next = self.m0_wready.val();
        self.sel_bvalid.next = self.m0_bvalid.val();
        self.sel_bresp.next = self.m0_bresp.val();
        if self.w_m1.q.val() {
            self.sel_awready.next = self.m1_awready.val();
            self.sel_wready.next = self.m1_wready.val();
            self.sel_bvalid.next = self.m1_bvalid.val();
            self.sel_bresp.next = self.m1_bresp.val();
        }
        self.sel_arready.next = self.m0_arready.val();
        self.sel_rvalid.next = self.m0_rvalid.val();
        self.sel_rdata.next = self.m0_rdata.val();
        self.sel_rresp.next = self.m0_rresp.val();
        if self.r_m1.q.val() {
            self.sel_arready.next = self.m1_arready.val();
            self.sel_rvalid.next = self.m1_rvalid.val();
            self.sel_rdata.next = self.m1_rdata.val();
            self.sel_rresp.next = self.m1_rresp.val();
        }

        // Write direction: AW and W taken in either order, then issued
        // (each until its own handshake), then the response.
        self.aw_in.next = self.w_acc.val() & !self.aw_done.q.val() & self.s_awvalid.val();
        self.w_in.next = self.w_acc.val() & !self.w_done.q.val() & self.s_wvalid.val();
        self.aw_out.next = self.w_iss.val() & !self.aw_done.q.val() & self.sel_awready.val();
        self.w_out.next = self.w_iss.val() & !self.w_done.q.val() & self.sel_wready.val();
        self.aw_now.next = self.aw_done.q.val() | self.aw_in.val() | self.aw_out.val();
        self.w_now.next = self.w_done.q.val() | self.w_in.val() | self.w_out.val();
        self.aw_done.d.next = self.aw_now.val();
        self.w_done.d.next = self.w_now.val();
        if self.aw_in.val() {
            self.waddr.d.next = self.s_awaddr.val();
            self.wprot.d.next = self.s_awprot.val();
            self.w_m1.d.next = (self.s_awaddr.val() & self.top_mask.val()) == self.top_mask.val();
        }
        if self.w_in.val() {
            self.wdata.d.next = self.s_wdata.val();
            self.wstrb.d.next = self.s_wstrb.val();
        }
        if (self.w_acc.val() | self.w_iss.val()) & self.aw_now.val() & self.w_now.val() {
            self.wph.d.next = self.wph.q.val() + self.ph_step.val();
            self.aw_done.d.next = false;
            self.w_done.d.next = false;
        }
        if self.w_wait.val() & self.sel_bvalid.val() {
            self.bresp.d.next = self.sel_bresp.val();
            self.wph.d.next = self.wph.q.val() + self.ph_step.val();
        }
        if self.w_resp.val() & self.s_bready.val() {
            self.wph.d.next = self.wph.q.val() + self.ph_step.val();
        }

        // Read direction.
        if self.r_acc.val() & self.s_arvalid.val() {
            self.raddr.d.next = self.s_araddr.val();
            self.rprot.d.next = self.s_arprot.val();
            self.r_m1.d.next = (self.s_araddr.val() & self.top_mask.val()) == self.top_mask.val();
            self.rph.d.next = self.rph.q.val() + self.ph_step.val();
        }
        if self.r_iss.val() & self.sel_arready.val() {
            self.rph.d.next = self.rph.q.val() + self.ph_step.val();
        }
        if self.r_wait.val() & self.sel_rvalid.val() {
            self.rdata.d.next = self.sel_rdata.val();
            self.rresp.d.next = self.sel_rresp.val();
            self.rph.d.next = self.rph.q.val() + self.ph_step.val();
        }
        if self.r_resp.val() & self.s_rready.val() {
            self.rph.d.next = self.rph.q.val() + self.ph_step.val();
        }

        if self.reset.val() {
            self.wph.d.next = self.ph_accept.val();
            self.aw_done.d.next = false;
            self.w_done.d.next = false;
            self.w_m1.d.next = false;
            self.waddr.d.next = self.zero_a.val();
            self.wprot.d.next = self.zero_3.val();
            self.wdata.d.next = self.zero_32.val();
            self.wstrb.d.next = self.zero_4.val();
            self.bresp.d.next = self.zero_2.val();
            self.rph.d.next = self.ph_accept.val();
            self.r_m1.d.next = false;
            self.raddr.d.next = self.zero_a.val();
            self.rprot.d.next = self.zero_3.val();
            self.rdata.d.next = self.zero_32.val();
            self.rresp.d.next = self.zero_2.val();
        }
    }
}

/// Top module name of a parameter point.
pub fn axil_split_top_name(p: &AxilSplitParams) -> String {
    format!("exanet_axil_split_a{}_s{:x}", p.addr_bits, p.split)
}

fn build<const A: usize>(p: &AxilSplitParams) -> Result<Emitted> {
    let mut uut = AxilSplit::<A>::new(p);
    emit(&mut uut, &axil_split_top_name(p))
}

/// Validate `p` and emit its split as Verilog.
pub fn emit_axil_split(p: &AxilSplitParams) -> Result<Emitted> {
    p.validate()?;
    macro_rules! widths {
        ($($a:literal)*) => {
            match p.addr_bits {
                $($a => build::<$a>(p),)*
                a => bail!("axil_split.addr_bits = {a}: not supported"),
            }
        };
    }
    widths!(12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    fn p(addr_bits: u32, split: u64) -> AxilSplitParams {
        AxilSplitParams { addr_bits, split }
    }

    #[test]
    fn emits_lint_clean_verilog_across_the_range() {
        for q in [
            p(12, 0x800),
            p(12, 0xFFC),
            p(16, 0xF000),
            p(20, 0xC0000),
            p(32, 0xFFFF_F000),
        ] {
            let e = emit_axil_split(&q).unwrap();
            assert_eq!(e.top, axil_split_top_name(&q));
            let top = &e.modules.last().unwrap().1;
            let a = q.addr_bits - 1;
            for port in ["s_awaddr", "s_araddr", "m0_awaddr", "m1_araddr"] {
                assert!(
                    top.contains(&format!("[{a}:0] {port};")),
                    "{} lacks {port}",
                    e.top
                );
            }
            for port in ["s_bready", "m0_bvalid", "m1_rready", "m1_wvalid"] {
                assert!(top.contains(&format!(" {port};")), "{} lacks {port}", e.top);
            }
            assert_lint_clean(&e);
        }
    }

    #[test]
    fn bad_parameters_are_errors_naming_key_and_value() {
        let e = emit_axil_split(&p(16, 0xD000)).unwrap_err().to_string();
        assert!(e.contains("axil_split.split = 0xd000"), "{e}");
        let e = emit_axil_split(&p(40, 0x800)).unwrap_err().to_string();
        assert!(e.contains("axil_split.addr_bits = 40"), "{e}");
    }
}
