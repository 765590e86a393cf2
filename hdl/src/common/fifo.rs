//! `fifo`: synchronous first-word-fall-through FIFO with LUTRAM storage.
//!
//! Purpose: the buffer under every router input VC, NI queue and link
//! retry path. The head word shows at `dout` combinationally while the FIFO
//! is not empty, so a consumer reads and pops in the same cycle.
//!
//! Ports (top module `exanet_fifo_w<width>_d<depth>_a<almost_full>`):
//! - `clock`; `reset` (synchronous: empties the FIFO, clears the error flags)
//! - `push`, `din[width]`: write `din` at the tail
//! - `pop`: remove the head word
//! - `dout[width]`: slot at the read pointer (the head word when `!empty`)
//! - `empty`, `full`, `almost_full` (`count >= almost_full`), `count[log2(depth)+1]`
//! - `overflow`: sticky, a push while full (and no pop) was dropped
//! - `underflow`: sticky, a pop while empty was ignored
//!
//! Push and pop in one cycle while full: the pop happens and the push is
//! accepted (the freed slot takes the new word); no overflow.
//!
//! Latency: a pushed word is at `dout` one cycle after the push (when it
//! is the head). `count`, the status flags and the error flags are
//! registered state: they change one cycle after the push/pop/reset.
//!
//! Storage is a custom Verilog leaf, [`FifoMem`]: `(* ram_style =
//! "distributed" *)` memory written on the rising edge and read
//! combinationally, which Vivado and yosys map to LUTRAM (RAM32M16 for a
//! 16-deep FIFO on UltraScale+). It is zero at power-on and is not reset.
//!
//! The golden model is `exanet_sim::common::fifo`; its doc defines every
//! corner case, and the `fifo` co-simulation bench checks the two agree.
//!
//! Parameters ([`FifoParams`]):
//! - `width`: word width in bits; supported: [`SUPPORTED_WIDTHS`]
//! - `depth`: number of words, a power of two in 2..=1024
//! - `almost_full`: threshold of the `almost_full` flag, 1..=depth

use crate::emit::{emit, Emitted};
use anyhow::{bail, Result};
pub use exanet_sim::common::fifo::FifoParams;
use rust_hdl::prelude::*;

/// Word widths with a compiled instance. 132 is the default router flit
/// word (128 data + head/tail + 2 VC bits), 133 leaves room for 8 VCs. Each
/// width costs compile time for all ten depths; other widths round up to
/// the next supported one in the generator.
pub const SUPPORTED_WIDTHS: &[u32] = &[8, 16, 32, 64, 128, 132, 133];

/// Depths with a compiled instance: every power of two in 2..=1024.
pub const SUPPORTED_DEPTHS: &[u32] = &[2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/// Storage of `2^A` words of `W` bits: write on the rising edge, read
/// combinationally. The Verilog is hand-written so that it infers LUTRAM;
/// `update` models the same behaviour for rust-hdl's own simulator.
#[derive(LogicBlock)]
pub struct FifoMem<const W: usize, const A: usize> {
    /// Write clock.
    pub clock: Signal<In, Clock>,
    /// Write `write_data` at `write_address` on the rising edge.
    pub write_enable: Signal<In, bool>,
    /// Slot written.
    pub write_address: Signal<In, Bits<A>>,
    /// Word written.
    pub write_data: Signal<In, Bits<W>>,
    /// Slot read.
    pub read_address: Signal<In, Bits<A>>,
    /// `mem[read_address]`, combinational.
    pub read_data: Signal<Out, Bits<W>>,
    _mem: Vec<Bits<W>>,
}

impl<const W: usize, const A: usize> Default for FifoMem<W, A> {
    fn default() -> Self {
        FifoMem {
            clock: Default::default(),
            write_enable: Default::default(),
            write_address: Default::default(),
            write_data: Default::default(),
            read_address: Default::default(),
            read_data: Default::default(),
            _mem: vec![Bits::<W>::default(); 1 << A],
        }
    }
}

impl<const W: usize, const A: usize> Logic for FifoMem<W, A> {
    fn update(&mut self) {
        // `pos_edge` is true in exactly one settle iteration, before the
        // pointer registers' new values have propagated here.
        if self.clock.pos_edge() && self.write_enable.val() {
            self._mem[self.write_address.val().index()] = self.write_data.val();
        }
        self.read_data.next = self._mem[self.read_address.val().index()];
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "\
// LUTRAM: written on the rising edge, read combinationally (first-word
// fall-through). Zero at power-on; not reset.
(* ram_style = \"distributed\" *)
reg [{wm1}:0] mem [0:{dm1}];
reg [{a}:0] init_i;
initial begin
    for (init_i = {ap1}'d0; init_i < {ap1}'d{d}; init_i = init_i + {ap1}'d1)
        mem[init_i[{am1}:0]] = {w}'d0;
end
always @(posedge clock) begin
    if (write_enable)
        mem[write_address] <= write_data;
end
always @(*) read_data = mem[read_address];
",
            wm1 = W - 1,
            w = W,
            d = 1usize << A,
            dm1 = (1usize << A) - 1,
            a = A,
            ap1 = A + 1,
            am1 = A - 1,
        ))
    }
}

/// The FIFO: `W`-bit words, `2^A` deep, `C = A + 1` count bits.
#[derive(LogicBlock)]
pub struct Fifo<const W: usize, const A: usize, const C: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// Write `din`.
    pub push: Signal<In, bool>,
    /// Word to write.
    pub din: Signal<In, Bits<W>>,
    /// Remove the head word.
    pub pop: Signal<In, bool>,
    /// Slot at the read pointer (head word when not empty).
    pub dout: Signal<Out, Bits<W>>,
    /// No word stored.
    pub empty: Signal<Out, bool>,
    /// All slots used.
    pub full: Signal<Out, bool>,
    /// `count >= almost_full`.
    pub almost_full: Signal<Out, bool>,
    /// Words stored.
    pub count: Signal<Out, Bits<C>>,
    /// Sticky: a push was dropped.
    pub overflow: Signal<Out, bool>,
    /// Sticky: a pop was ignored.
    pub underflow: Signal<Out, bool>,
    ram: FifoMem<W, A>,
    rd: DFF<Bits<A>>,
    wr: DFF<Bits<A>>,
    used: DFF<Bits<C>>,
    ovf: DFF<bool>,
    unf: DFF<bool>,
    is_empty: Signal<Local, bool>,
    is_full: Signal<Local, bool>,
    do_push: Signal<Local, bool>,
    do_pop: Signal<Local, bool>,
    // Typed constants: untyped literals become 32-bit and trip WIDTH lint.
    ptr_zero: Constant<Bits<A>>,
    ptr_one: Constant<Bits<A>>,
    count_zero: Constant<Bits<C>>,
    count_one: Constant<Bits<C>>,
    count_depth: Constant<Bits<C>>,
    count_almost_full: Constant<Bits<C>>,
}

impl<const W: usize, const A: usize, const C: usize> Fifo<W, A, C> {
    /// A FIFO whose `almost_full` flag rises at `almost_full` words.
    /// `C` must be `A + 1` and `almost_full` in 1..=2^A (checked by
    /// [`emit_fifo`]; callers of the generic type check it themselves).
    pub fn new(almost_full: u32) -> Self {
        assert!(C == A + 1 && (1..=1u64 << A).contains(&(almost_full as u64)));
        Fifo {
            clock: Default::default(),
            reset: Default::default(),
            push: Default::default(),
            din: Default::default(),
            pop: Default::default(),
            dout: Default::default(),
            empty: Default::default(),
            full: Default::default(),
            almost_full: Default::default(),
            count: Default::default(),
            overflow: Default::default(),
            underflow: Default::default(),
            ram: Default::default(),
            rd: Default::default(),
            wr: Default::default(),
            used: Default::default(),
            ovf: Default::default(),
            unf: Default::default(),
            is_empty: Default::default(),
            is_full: Default::default(),
            do_push: Default::default(),
            do_pop: Default::default(),
            ptr_zero: Constant::new(bits(0)),
            ptr_one: Constant::new(bits(1)),
            count_zero: Constant::new(bits(0)),
            count_one: Constant::new(bits(1)),
            count_depth: Constant::new(bits(1 << A)),
            count_almost_full: Constant::new(bits(almost_full as u64)),
        }
    }
}

impl<const W: usize, const A: usize, const C: usize> Logic for Fifo<W, A, C> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rd, wr, used, ovf, unf);
        self.is_empty.next = self.used.q.val() == self.count_zero.val();
        self.is_full.next = self.used.q.val() == self.count_depth.val();
        self.do_pop.next = self.pop.val() & !self.is_empty.val() & !self.reset.val();
        // Full: the push takes the slot the same-cycle pop frees.
        self.do_push.next =
            self.push.val() & (!self.is_full.val() | self.do_pop.val()) & !self.reset.val();
        self.ram.clock.next = self.clock.val();
        self.ram.write_enable.next = self.do_push.val();
        self.ram.write_address.next = self.wr.q.val();
        self.ram.write_data.next = self.din.val();
        self.ram.read_address.next = self.rd.q.val();
        if self.do_push.val() {
            self.wr.d.next = self.wr.q.val() + self.ptr_one.val();
        }
        if self.do_pop.val() {
            self.rd.d.next = self.rd.q.val() + self.ptr_one.val();
        }
        if self.do_push.val() & !self.do_pop.val() {
            self.used.d.next = self.used.q.val() + self.count_one.val();
        }
        if !self.do_push.val() & self.do_pop.val() {
            self.used.d.next = self.used.q.val() - self.count_one.val();
        }
        self.ovf.d.next = self.ovf.q.val() | (self.push.val() & !self.do_push.val());
        self.unf.d.next = self.unf.q.val() | (self.pop.val() & !self.do_pop.val());
        if self.reset.val() {
            self.rd.d.next = self.ptr_zero.val();
            self.wr.d.next = self.ptr_zero.val();
            self.used.d.next = self.count_zero.val();
            self.ovf.d.next = false;
            self.unf.d.next = false;
        }
        self.dout.next = self.ram.read_data.val();
        self.empty.next = self.is_empty.val();
        self.full.next = self.is_full.val();
        self.almost_full.next = self.used.q.val() >= self.count_almost_full.val();
        self.count.next = self.used.q.val();
        self.overflow.next = self.ovf.q.val();
        self.underflow.next = self.unf.q.val();
    }
}

/// Top module name of a parameter point.
pub fn fifo_top_name(p: &FifoParams) -> String {
    format!("exanet_fifo_w{}_d{}_a{}", p.width, p.depth, p.almost_full)
}

fn build<const W: usize, const A: usize, const C: usize>(p: &FifoParams) -> Result<Emitted> {
    let mut uut = Fifo::<W, A, C>::new(p.almost_full);
    emit(&mut uut, &fifo_top_name(p))
}

fn by_depth<const W: usize>(p: &FifoParams) -> Result<Emitted> {
    match p.depth {
        2 => build::<W, 1, 2>(p),
        4 => build::<W, 2, 3>(p),
        8 => build::<W, 3, 4>(p),
        16 => build::<W, 4, 5>(p),
        32 => build::<W, 5, 6>(p),
        64 => build::<W, 6, 7>(p),
        128 => build::<W, 7, 8>(p),
        256 => build::<W, 8, 9>(p),
        512 => build::<W, 9, 10>(p),
        1024 => build::<W, 10, 11>(p),
        d => bail!("fifo.depth = {d}: not supported; supported depths: {SUPPORTED_DEPTHS:?}"),
    }
}

/// Validate `p` and emit its FIFO as Verilog.
pub fn emit_fifo(p: &FifoParams) -> Result<Emitted> {
    p.validate()?;
    match p.width {
        8 => by_depth::<8>(p),
        16 => by_depth::<16>(p),
        32 => by_depth::<32>(p),
        64 => by_depth::<64>(p),
        128 => by_depth::<128>(p),
        132 => by_depth::<132>(p),
        133 => by_depth::<133>(p),
        w => bail!("fifo.width = {w}: not supported; supported widths: {SUPPORTED_WIDTHS:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    fn p(width: u32, depth: u32, almost_full: u32) -> FifoParams {
        FifoParams {
            width,
            depth,
            almost_full,
        }
    }

    #[test]
    fn emits_lint_clean_verilog_across_the_range() {
        for q in [
            p(8, 2, 1),
            p(32, 16, 12),
            p(64, 64, 64),
            p(128, 256, 200),
            p(133, 1024, 1000),
            p(16, 4, 3),
        ] {
            let e = emit_fifo(&q).unwrap();
            assert_eq!(e.top, fifo_top_name(&q));
            let text = e.text();
            assert!(text.contains("ram_style = \"distributed\""));
            assert!(text.contains(&format!("reg [{}:0] mem [0:{}];", q.width - 1, q.depth - 1)));
            assert!(!text.contains('$'));
            let top = &e.modules.last().unwrap().1;
            for port in [
                "clock",
                "reset",
                "push",
                "din",
                "pop",
                "dout",
                "empty",
                "full",
                "almost_full",
                "count",
                "overflow",
                "underflow",
            ] {
                assert!(top.contains(port), "{} lacks port {port}", e.top);
            }
            let cb = q.count_bits();
            assert!(
                top.contains(&format!("[{}:0] count;", cb - 1)),
                "{} count is not {cb} bits",
                e.top
            );
            assert_lint_clean(&e);
        }
    }

    #[test]
    fn every_supported_point_emits() {
        for &w in SUPPORTED_WIDTHS {
            for &d in SUPPORTED_DEPTHS {
                let e = emit_fifo(&p(w, d, d)).unwrap();
                assert_eq!(e.top, format!("exanet_fifo_w{w}_d{d}_a{d}"));
            }
        }
    }

    #[test]
    fn bad_parameters_are_errors_naming_key_value_and_rule() {
        let e = emit_fifo(&p(33, 16, 4)).unwrap_err().to_string();
        assert!(
            e.contains("fifo.width") && e.contains("33") && e.contains("133"),
            "{e}"
        );
        let e = emit_fifo(&p(32, 24, 4)).unwrap_err().to_string();
        assert!(e.contains("fifo.depth") && e.contains("24"), "{e}");
        let e = emit_fifo(&p(32, 16, 17)).unwrap_err().to_string();
        assert!(e.contains("fifo.almost_full") && e.contains("17"), "{e}");
    }

    /// Storage must infer LUTRAM: yosys maps a 16 x 32 FIFO to RAM32M16 (and
    /// no flip-flops beyond the pointers, count and flags).
    #[test]
    fn yosys_maps_a_16_deep_fifo_to_lutram() {
        if std::process::Command::new("yosys")
            .arg("-V")
            .output()
            .is_err()
        {
            println!("ignored: yosys not installed; LUTRAM check skipped");
            return;
        }
        let e = emit_fifo(&p(32, 16, 12)).unwrap();
        let dir = std::env::temp_dir().join(format!("exanet-yosys-fifo-{}", std::process::id()));
        let files = e.write_dir(&dir).unwrap();
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        let script = format!(
            "read_verilog {}; synth_xilinx -family xcup -flatten -top {}; stat",
            names.join(" "),
            e.top
        );
        let out = std::process::Command::new("yosys")
            .args(["-p", &script])
            .output()
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "yosys failed:\n{text}");
        let cells = |name: &str| -> u32 {
            text.lines()
                .find_map(|l| {
                    let mut w = l.split_whitespace();
                    (w.next() == Some(name)).then(|| w.next()?.parse().ok())?
                })
                .unwrap_or(0)
        };
        println!(
            "yosys: RAM32M16={} LUTs={}",
            cells("RAM32M16"),
            (1..=6).map(|k| cells(&format!("LUT{k}"))).sum::<u32>()
        );
        assert!(cells("RAM32M16") >= 1, "no RAM32M16:\n{text}");
        let ffs = cells("FDRE") + cells("FDSE") + cells("FDCE") + cells("FDPE");
        // rd 4 + wr 4 + count 5 + 2 flags = 15 flip-flops, none for storage.
        assert_eq!(ffs, 15, "{text}");
    }

    /// rust-hdl's own simulator runs the blocks' `update()` (including the
    /// storage leaf's Rust model) against the golden model. Short: that
    /// simulator is slow; Verilator co-simulation is the main check.
    #[test]
    fn rust_update_matches_the_golden_model() {
        use exanet_sim::common::fifo::{Fifo as Golden, FifoInputs};
        use exanet_sim::rng::Rng;
        let q = p(8, 4, 3);
        let mut uut = Fifo::<8, 2, 3>::new(q.almost_full);
        uut.connect_all();
        let mut gold = Golden::<u64>::new(&q).unwrap();
        let mut rng = Rng::new(5);
        let (mut saw_full, mut saw_ovf) = (false, false);
        for cycle in 0..3000 {
            let bias = if (cycle / 16) % 2 == 0 { 0.8 } else { 0.2 };
            let i = FifoInputs {
                reset: rng.chance(0.01),
                push: rng.chance(bias),
                pop: rng.chance(1.0 - bias),
                din: rng.bits(8),
            };
            uut.clock.next = false.into();
            uut.reset.next = i.reset;
            uut.push.next = i.push;
            uut.pop.next = i.pop;
            uut.din.next = bits(i.din);
            assert!(simulate(&mut uut, 100), "did not settle");
            let o = gold.outputs(&i);
            let got = (
                uut.dout.val().to_u64(),
                uut.empty.val(),
                uut.full.val(),
                uut.almost_full.val(),
                uut.count.val().to_u64() as u32,
                uut.overflow.val(),
                uut.underflow.val(),
            );
            let want = (
                o.dout,
                o.empty,
                o.full,
                o.almost_full,
                o.count,
                o.overflow,
                o.underflow,
            );
            assert_eq!(got, want, "cycle {cycle}");
            saw_full |= o.full;
            saw_ovf |= o.overflow;
            uut.clock.next = true.into();
            assert!(simulate(&mut uut, 100), "did not settle");
            gold.tick(&i);
        }
        assert!(saw_full && saw_ovf);
    }
}
