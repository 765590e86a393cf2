//! `async_fifo`: two-clock first-word-fall-through FIFO (Gray-coded
//! pointers, `ASYNC_REG` synchronizer chains), and `reset_sync`.
//!
//! Purpose: the node's clock-domain crossings between the PL clock and each
//! transceiver's user clock (the 64-bit PHY word plus its data/control bit).
//!
//! Ports (top module `exanet_async_fifo_w<width>_d<depth>_s<sync_stages>`):
//! - write domain: `wr_clock`; `wr_reset` (synchronous); `push`,
//!   `din[width]`; `full`; `overflow` (sticky); `wr_count[log2(depth)+1]`
//! - read domain: `rd_clock`; `rd_reset` (synchronous); `pop`;
//!   `dout[width]`; `empty`; `underflow` (sticky); `rd_count[log2(depth)+1]`
//!
//! Every behaviour, the latency through the crossing and the reset rule
//! (reset both domains with overlapping windows) are defined by the golden
//! model, `exanet_sim::common::async_fifo`; the two-clock co-simulation
//! (`exanet cosim async_fifo`) checks every output of both domains at every
//! edge of either clock, with clock periods that drift against each other.
//!
//! Structure:
//! - storage: the `fifo` block's LUTRAM leaf ([`FifoMem`]), written in the
//!   write domain and read combinationally at the read pointer. A slot is
//!   read only after its write pointer has crossed the synchronizer, so the
//!   read never sees a word being written.
//! - pointers: binary (addressing) and Gray (crossing) registers per domain,
//!   the Gray code registered so a crossing pointer never glitches.
//! - [`SyncChain`]: `sync_stages` flip-flops marked `(* ASYNC_REG = "TRUE" *)`
//!   so Vivado places them together and reports them as synchronizers;
//!   the XDC adds `set_max_delay -datapath_only` and `set_bus_skew` on the
//!   Gray pointers (cells `*sync*stage0*`).
//!
//! `reset_sync` ([`ResetSync`]): a reset into a clock domain through the
//! same kind of chain, asserted and released on that domain's clock (like
//! Xilinx's `xpm_cdc_sync_rst`); at power-on its output is asserted.

use crate::common::fifo::FifoMem;
use crate::emit::{emit, Emitted};
use anyhow::{bail, Result};
pub use exanet_sim::common::async_fifo::AsyncFifoParams;
use rust_hdl::prelude::*;

/// Word widths with a compiled instance: bytes, 32- and 64-bit words, the
/// PHY word with its data/control bit (65), and a 128-bit flit payload.
pub const SUPPORTED_WIDTHS: &[u32] = &[8, 32, 64, 65, 128];

/// A chain of synchronizer flip-flops (`ASYNC_REG`) of `T` (a `bool` or
/// `Bits<W>`), `stages` long, with a synchronous clear. `q` is the last
/// stage.
#[derive(LogicBlock)]
pub struct SyncChain<T: Synth> {
    /// Destination clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous clear of every stage.
    pub reset: Signal<In, bool>,
    /// Value from the other domain.
    pub d: Signal<In, T>,
    /// Value after `stages` flip-flops.
    pub q: Signal<Out, T>,
    _stages: Vec<T>,
    _init_ones: bool,
}

impl<T: Synth> SyncChain<T> {
    /// A chain of `stages` flip-flops, each at `init` at power-on;
    /// `init_ones` says whether `init` is all ones (else it must be zero).
    pub fn new(stages: usize, init: T, init_ones: bool) -> Self {
        assert!(stages >= 2, "a synchronizer needs at least two flip-flops");
        SyncChain {
            clock: Default::default(),
            reset: Default::default(),
            d: Default::default(),
            q: Default::default(),
            _stages: vec![init; stages],
            _init_ones: init_ones,
        }
    }
}

impl<T: Synth> Logic for SyncChain<T> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.reset.val() {
                self._stages.iter_mut().for_each(|s| *s = T::default());
            } else {
                self._stages.rotate_right(1);
                self._stages[0] = self.d.val();
            }
        }
        self.q.next = *self._stages.last().expect("two stages");
    }

    fn connect(&mut self) {
        self.q.connect();
    }

    fn hdl(&self) -> Verilog {
        let n = self._stages.len();
        let w = T::BITS;
        let init = if self._init_ones {
            format!("{{{w}{{1'b1}}}}")
        } else {
            format!("{w}'d0")
        };
        let mut s = String::from(
            "// Synchronizer: flip-flops kept together and reported as such by\n\
             // Vivado (ASYNC_REG); the first samples the other clock domain.\n",
        );
        for k in 0..n {
            s += &format!(
                "(* ASYNC_REG = \"TRUE\" *) reg [{}:0] stage{k} = {init};\n",
                w - 1
            );
        }
        s += "always @(posedge clock) begin\n    if (reset) begin\n";
        for k in 0..n {
            s += &format!("        stage{k} <= {w}'d0;\n");
        }
        s += "    end else begin\n        stage0 <= d;\n";
        for k in 1..n {
            s += &format!("        stage{k} <= stage{};\n", k - 1);
        }
        s += &format!("    end\nend\nalways @(*) q = stage{};\n", n - 1);
        Verilog::Custom(s)
    }
}

/// The asynchronous FIFO: `W`-bit words, `2^A` deep, `P = A + 1` pointer bits.
#[derive(LogicBlock)]
pub struct AsyncFifo<const W: usize, const A: usize, const P: usize> {
    /// Write clock.
    pub wr_clock: Signal<In, Clock>,
    /// Synchronous reset of the write domain.
    pub wr_reset: Signal<In, bool>,
    /// Write `din`.
    pub push: Signal<In, bool>,
    /// Word to write.
    pub din: Signal<In, Bits<W>>,
    /// No room as far as the write side knows.
    pub full: Signal<Out, bool>,
    /// Sticky: a push was dropped.
    pub overflow: Signal<Out, bool>,
    /// Words the write side must assume stored.
    pub wr_count: Signal<Out, Bits<P>>,
    /// Read clock.
    pub rd_clock: Signal<In, Clock>,
    /// Synchronous reset of the read domain.
    pub rd_reset: Signal<In, bool>,
    /// Remove the head word.
    pub pop: Signal<In, bool>,
    /// Word at the read pointer.
    pub dout: Signal<Out, Bits<W>>,
    /// Nothing to read as far as the read side knows.
    pub empty: Signal<Out, bool>,
    /// Sticky: a pop was ignored.
    pub underflow: Signal<Out, bool>,
    /// Words the read side knows are stored.
    pub rd_count: Signal<Out, Bits<P>>,
    ram: FifoMem<W, A>,
    wbin: DFF<Bits<P>>,
    wgray: DFF<Bits<P>>,
    ovf: DFF<bool>,
    rbin: DFF<Bits<P>>,
    rgray: DFF<Bits<P>>,
    unf: DFF<bool>,
    /// Read pointer (Gray) into the write domain.
    wsync: SyncChain<Bits<P>>,
    /// Write pointer (Gray) into the read domain.
    rsync: SyncChain<Bits<P>>,
    is_full: Signal<Local, bool>,
    is_empty: Signal<Local, bool>,
    do_push: Signal<Local, bool>,
    do_pop: Signal<Local, bool>,
    wbin_next: Signal<Local, Bits<P>>,
    rbin_next: Signal<Local, Bits<P>>,
    // Gray to binary of the synchronized pointers: XOR of right shifts by
    // 1, 2, 4 and 8 (pointers have at most 11 bits).
    wg1: Signal<Local, Bits<P>>,
    wg2: Signal<Local, Bits<P>>,
    wg4: Signal<Local, Bits<P>>,
    wg8: Signal<Local, Bits<P>>,
    rg1: Signal<Local, Bits<P>>,
    rg2: Signal<Local, Bits<P>>,
    rg4: Signal<Local, Bits<P>>,
    rg8: Signal<Local, Bits<P>>,
    c0: Constant<Bits<P>>,
    c1: Constant<Bits<P>>,
    c2: Constant<Bits<P>>,
    c4: Constant<Bits<P>>,
    c8: Constant<Bits<P>>,
    /// The two top pointer bits: a full FIFO's Gray pointers differ there.
    top2: Constant<Bits<P>>,
}

impl<const W: usize, const A: usize, const P: usize> AsyncFifo<W, A, P> {
    /// A FIFO whose pointers cross through `sync_stages` flip-flops. `P`
    /// must be `A + 1` and `A >= 2` (checked by [`emit_async_fifo`]).
    pub fn new(sync_stages: usize) -> Self {
        assert!(P == A + 1 && A >= 2 && P <= 16);
        AsyncFifo {
            wr_clock: Default::default(),
            wr_reset: Default::default(),
            push: Default::default(),
            din: Default::default(),
            full: Default::default(),
            overflow: Default::default(),
            wr_count: Default::default(),
            rd_clock: Default::default(),
            rd_reset: Default::default(),
            pop: Default::default(),
            dout: Default::default(),
            empty: Default::default(),
            underflow: Default::default(),
            rd_count: Default::default(),
            ram: Default::default(),
            wbin: Default::default(),
            wgray: Default::default(),
            ovf: Default::default(),
            rbin: Default::default(),
            rgray: Default::default(),
            unf: Default::default(),
            wsync: SyncChain::new(sync_stages, Bits::default(), false),
            rsync: SyncChain::new(sync_stages, Bits::default(), false),
            is_full: Default::default(),
            is_empty: Default::default(),
            do_push: Default::default(),
            do_pop: Default::default(),
            wbin_next: Default::default(),
            rbin_next: Default::default(),
            wg1: Default::default(),
            wg2: Default::default(),
            wg4: Default::default(),
            wg8: Default::default(),
            rg1: Default::default(),
            rg2: Default::default(),
            rg4: Default::default(),
            rg8: Default::default(),
            c0: Constant::new(bits(0)),
            c1: Constant::new(bits(1)),
            // A shift by at least P clears the value, so a shift that does
            // not fit in P bits is clamped to 2^P - 1 (>= P).
            c2: Constant::new(bits(2)),
            c4: Constant::new(bits(4u64.min((1 << P) - 1))),
            c8: Constant::new(bits(8u64.min((1 << P) - 1))),
            top2: Constant::new(bits(3 << (A - 1))),
        }
    }
}

impl<const W: usize, const A: usize, const P: usize> Logic for AsyncFifo<W, A, P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, wr_clock, wbin, wgray, ovf);
        dff_setup!(self, rd_clock, rbin, rgray, unf);
        // Crossings: each domain's Gray pointer into the other one.
        self.wsync.clock.next = self.wr_clock.val();
        self.wsync.reset.next = self.wr_reset.val();
        self.wsync.d.next = self.rgray.q.val();
        self.rsync.clock.next = self.rd_clock.val();
        self.rsync.reset.next = self.rd_reset.val();
        self.rsync.d.next = self.wgray.q.val();
        // Write domain.
        self.is_full.next = self.wgray.q.val() == (self.wsync.q.val() ^ self.top2.val());
        self.do_push.next = self.push.val() & !self.is_full.val() & !self.wr_reset.val();
        self.wbin_next.next = self.wbin.q.val() + self.c1.val();
        self.ram.clock.next = self.wr_clock.val();
        self.ram.write_enable.next = self.do_push.val();
        self.ram.write_address.next = self.wbin.q.val().get_bits::<A>(0);
        self.ram.write_data.next = self.din.val();
        if self.do_push.val() {
            self.wbin.d.next = self.wbin_next.val();
            self.wgray.d.next = self.wbin_next.val() ^ (self.wbin_next.val() >> self.c1.val());
        }
        self.ovf.d.next = self.ovf.q.val() | (self.push.val() & !self.do_push.val());
        if self.wr_reset.val() {
            self.wbin.d.next = self.c0.val();
            self.wgray.d.next = self.c0.val();
            self.ovf.d.next = false;
        }
        self.wg1.next = self.wsync.q.val() ^ (self.wsync.q.val() >> self.c1.val());
        self.wg2.next = self.wg1.val() ^ (self.wg1.val() >> self.c2.val());
        self.wg4.next = self.wg2.val() ^ (self.wg2.val() >> self.c4.val());
        self.wg8.next = self.wg4.val() ^ (self.wg4.val() >> self.c8.val());
        self.full.next = self.is_full.val();
        self.overflow.next = self.ovf.q.val();
        self.wr_count.next = self.wbin.q.val() - self.wg8.val();
        // Read domain.
        self.is_empty.next = self.rgray.q.val() == self.rsync.q.val();
        self.do_pop.next = self.pop.val() & !self.is_empty.val() & !self.rd_reset.val();
        self.rbin_next.next = self.rbin.q.val() + self.c1.val();
        self.ram.read_address.next = self.rbin.q.val().get_bits::<A>(0);
        if self.do_pop.val() {
            self.rbin.d.next = self.rbin_next.val();
            self.rgray.d.next = self.rbin_next.val() ^ (self.rbin_next.val() >> self.c1.val());
        }
        self.unf.d.next = self.unf.q.val() | (self.pop.val() & !self.do_pop.val());
        if self.rd_reset.val() {
            self.rbin.d.next = self.c0.val();
            self.rgray.d.next = self.c0.val();
            self.unf.d.next = false;
        }
        self.rg1.next = self.rsync.q.val() ^ (self.rsync.q.val() >> self.c1.val());
        self.rg2.next = self.rg1.val() ^ (self.rg1.val() >> self.c2.val());
        self.rg4.next = self.rg2.val() ^ (self.rg2.val() >> self.c4.val());
        self.rg8.next = self.rg4.val() ^ (self.rg4.val() >> self.c8.val());
        self.dout.next = self.ram.read_data.val();
        self.empty.next = self.is_empty.val();
        self.underflow.next = self.unf.q.val();
        self.rd_count.next = self.rg8.val() - self.rbin.q.val();
    }
}

/// `reset_sync`: `reset_in` (from any domain, or asynchronous) into the
/// domain of `clock`, through `stages` `ASYNC_REG` flip-flops. Asserted at
/// power-on; follows `reset_in` `stages` edges later, both ways.
#[derive(LogicBlock)]
pub struct ResetSync {
    /// Destination clock.
    pub clock: Signal<In, Clock>,
    /// Reset from another domain.
    pub reset_in: Signal<In, bool>,
    /// Reset synchronous to `clock`.
    pub reset: Signal<Out, bool>,
    chain: SyncChain<bool>,
    never: Constant<bool>,
}

impl ResetSync {
    /// A reset synchronizer `stages` flip-flops long.
    pub fn new(stages: usize) -> Self {
        ResetSync {
            clock: Default::default(),
            reset_in: Default::default(),
            reset: Default::default(),
            chain: SyncChain::new(stages, true, true),
            never: Constant::new(false),
        }
    }
}

impl Logic for ResetSync {
    #[hdl_gen]
    fn update(&mut self) {
        self.chain.clock.next = self.clock.val();
        self.chain.reset.next = self.never.val();
        self.chain.d.next = self.reset_in.val();
        self.reset.next = self.chain.q.val();
    }
}

/// Top module name of a parameter point.
pub fn async_fifo_top_name(p: &AsyncFifoParams) -> String {
    format!(
        "exanet_async_fifo_w{}_d{}_s{}",
        p.width, p.depth, p.sync_stages
    )
}

fn build<const W: usize, const A: usize, const P: usize>(p: &AsyncFifoParams) -> Result<Emitted> {
    let mut uut = AsyncFifo::<W, A, P>::new(p.sync_stages as usize);
    emit(&mut uut, &async_fifo_top_name(p))
}

fn by_depth<const W: usize>(p: &AsyncFifoParams) -> Result<Emitted> {
    match p.depth {
        4 => build::<W, 2, 3>(p),
        8 => build::<W, 3, 4>(p),
        16 => build::<W, 4, 5>(p),
        32 => build::<W, 5, 6>(p),
        64 => build::<W, 6, 7>(p),
        128 => build::<W, 7, 8>(p),
        256 => build::<W, 8, 9>(p),
        512 => build::<W, 9, 10>(p),
        1024 => build::<W, 10, 11>(p),
        d => bail!("async_fifo.depth = {d}: not supported (a power of two in 4..=1024)"),
    }
}

/// Validate `p` and emit its asynchronous FIFO as Verilog.
pub fn emit_async_fifo(p: &AsyncFifoParams) -> Result<Emitted> {
    p.validate()?;
    match p.width {
        8 => by_depth::<8>(p),
        32 => by_depth::<32>(p),
        64 => by_depth::<64>(p),
        65 => by_depth::<65>(p),
        128 => by_depth::<128>(p),
        w => bail!("async_fifo.width = {w}: not supported; supported widths: {SUPPORTED_WIDTHS:?}"),
    }
}

/// Emit a reset synchronizer `stages` flip-flops long (2..=4), top
/// `exanet_reset_sync_s<stages>`.
pub fn emit_reset_sync(stages: u32) -> Result<Emitted> {
    if !exanet_sim::common::async_fifo::SYNC_STAGES.contains(&stages) {
        bail!("reset_sync.stages = {stages}: must be 2..=4");
    }
    let mut uut = ResetSync::new(stages as usize);
    emit(&mut uut, &format!("exanet_reset_sync_s{stages}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    fn p(width: u32, depth: u32, sync_stages: u32) -> AsyncFifoParams {
        AsyncFifoParams {
            width,
            depth,
            sync_stages,
        }
    }

    #[test]
    fn emits_lint_clean_verilog_with_marked_synchronizers() {
        for q in [p(8, 4, 2), p(65, 16, 2), p(128, 1024, 4), p(32, 64, 3)] {
            let e = emit_async_fifo(&q).unwrap();
            assert_eq!(e.top, async_fifo_top_name(&q));
            let text = e.text();
            assert!(!text.contains('$'));
            // Two chains of `sync_stages` flip-flops, each marked.
            assert_eq!(
                text.matches("(* ASYNC_REG = \"TRUE\" *)").count(),
                2 * q.sync_stages as usize,
                "{}",
                e.top
            );
            let top = &e.modules.last().unwrap().1;
            for port in [
                "wr_clock",
                "wr_reset",
                "push",
                "din",
                "full",
                "overflow",
                "wr_count",
                "rd_clock",
                "rd_reset",
                "pop",
                "dout",
                "empty",
                "underflow",
                "rd_count",
            ] {
                assert!(top.contains(port), "{} lacks port {port}", e.top);
            }
            assert_lint_clean(&e);
        }
        for s in 2..=4 {
            let e = emit_reset_sync(s).unwrap();
            assert_eq!(e.text().matches("(* ASYNC_REG").count(), s as usize);
            assert_lint_clean(&e);
        }
    }

    #[test]
    fn bad_parameters_are_errors_naming_key_and_value() {
        let e = emit_async_fifo(&p(33, 16, 2)).unwrap_err().to_string();
        assert!(
            e.contains("async_fifo.width = 33") && e.contains("65"),
            "{e}"
        );
        let e = emit_async_fifo(&p(32, 2, 2)).unwrap_err().to_string();
        assert!(e.contains("async_fifo.depth = 2"), "{e}");
        let e = emit_async_fifo(&p(32, 16, 7)).unwrap_err().to_string();
        assert!(e.contains("async_fifo.sync_stages = 7"), "{e}");
        let e = emit_reset_sync(1).unwrap_err().to_string();
        assert!(e.contains("reset_sync.stages = 1"), "{e}");
    }
}
