//! `ar_check`: the allreduce engine's registers and descriptor check.
//!
//! Purpose: the first slice of the engine inside the NI. It holds the
//! engine's privileged registers of the golden map (`exanet_sim::ni::regs`:
//! AR_THRESHOLD, AR_TIMEOUT and every communicator slot's AR_ORIGIN,
//! AR_EXTENT, AR_RANK, AR_CTRL, AR_SCRATCH_LO/HI, AR_SCRATCH_SIZE) with the
//! golden write rules (`Ni::ar_comm_write`: a field other than AR_CTRL is
//! refused while its slot is enabled; AR_CTRL with ENABLE checks the box
//! inside the torus, the rank inside the box and the scratch area inside
//! memory, and is refused, changing nothing, when one fails), and checks a
//! descriptor in the golden order (`Engine::check`, the codes of
//! [`ArStatus`]): BAD_COMM (unknown or disabled slot, or another PDID),
//! NOT_MEMBER (this node is not at its rank's place in the box), BAD_TYPE
//! (undefined op or dtype, bitwise op on a float type), BAD_COUNT (count 0,
//! over `max_vector_bytes`, or more scratch than half the slot's area, the
//! need walked by [`ar_sched`](super::ar_sched)), BAD_ADDR (source or
//! destination misaligned to the element size or past the memory), else OK.
//!
//! Also here for the collective the NI runs (`ni/ar_send.v`): each slot's
//! sequence number (`s_seq`, golden `Slot::seq`: zero at every AR_CTRL
//! write taken, advanced on `seq_adv`), the checked descriptor's steps
//! walked again (`run`, then one per `run_next` while `run_on`) with the
//! partner's coordinates (golden `CommBox::coords_of`: its digits in the
//! box from the sequencer's `partner_dig`, registered with the step, plus
//! the origin modulo the torus), and the refusal of
//! an AR_CTRL write to the slot a collective runs on (`run_on`). The
//! collective's data path, AR_CNT / AR_REJ and the timeout are in the NI.
//!
//! Ports:
//! - `clock`; `reset` (synchronous: every slot disabled and zero, threshold
//!   4096, timeout 0, as the golden engine at reset);
//! - `node[22]`: this node's coordinates (held constant);
//! - register write: `wr`, `wr_addr[12]` (node-page offset), `wr_data[32]`;
//!   `wr_ok` (combinational, this cycle's answer: 0 = SLVERR, no effect); the
//!   effect is visible from the next cycle. No write while `busy` (the NI
//!   holds its AXI4-Lite slave during a check; a write then is refused);
//! - register read: `rd_addr[12]`; `rd_data[32]`, `rd_ok` (combinational);
//! - descriptor check: `chk` (with `busy` low) and `d_op[3] d_dtype[3]
//!   d_count[32] d_src[42] d_dst[42] d_comm[4] d_pdid[16]` (the posting
//!   channel's PDID); `busy` from the next cycle until `done` (a one-cycle
//!   pulse) with `status[3]`.
//! - the collective: `run`, `run_on`, `run_next`, `seq_adv` in; out the
//!   step presented (`st_valid`, `st_done`, `st_index[8]`,
//!   `st_send_lo/hi[32]`, `st_recv_empty`, `st_their_off[36]`,
//!   `st_dest[22]`; for the combining step `st_recv_lo/hi[32]`,
//!   `st_combine`, `st_my_off[36]`, `st_partner[12]`, the partner's
//!   digits in the box), the checked descriptor's slot and codes
//!   (`run_pdid`, `run_seq`, `run_comm`, `run_op`, `run_dtype`, `run_e`,
//!   `run_scratch[42]`, `run_half[31]`), and
//!   `timeout[32]`, AR_TIMEOUT as a write this cycle leaves it;
//! - the receive path's slot look-up (combinational): `fq_comm[4]` in; out
//!   that slot's `fq_ctrl[32]`, `fq_origin[12]`, `fq_extent[21]`,
//!   `fq_seq[14]`, `fq_scratch[42]`, `fq_ssize[32]`; and `clr` with
//!   `clr_slot[4]` in a cycle an AR_CTRL write is taken (its receive records
//!   start again, golden `set_communicator`).
//!
//! Latency: `done` 2 cycles after `chk` when a check before BAD_COUNT's
//! scratch test fails, else after the `ar_sched` walk (2 cycles per step,
//! plus the gather chains: under `(K + 1) · (K + 3)` cycles for K = log2 of
//! the rank count, and at least K + 1 cycles: the doubling of Q's digits
//! must be over, which an extra rank's two-step walk may not be) plus 2.
//!
//! What is registered for logic depth, and why it is safe: with an
//! AR_CTRL write taken, this node's digits in the slot's box (`s_rdig`,
//! its offsets from the origin modulo the torus, as `s_member` is taken);
//! when a check starts (`S_Q`), the slot's x and y extents, origin, rank
//! count and `s_rdig` (`q_*`), which the collective's walk (`run`, right
//! at the check's `done`) reads: nothing can change them in between (the
//! NI holds its AXI4-Lite slave during the check; an enabled slot takes
//! only AR_CTRL writes, refused on the running slot). The digits of Q
//! (`q_dq`, the pre / post step's distance) are doubled from those of 1
//! once per cycle of the check's walk while 2 · `q_dp` <= P: K = log2 Q
//! cycles, and the walk takes two or more per reduce step (K of them), so
//! they are final before `done`. No division remains: the sequencer gives
//! the partner's digits (see [`ar_sched`](super::ar_sched)).
//!
//! Every code and layout comes from the golden definitions: register
//! offsets from `regs`, coordinate fields from `packet::coords`, status
//! codes from [`ArStatus`], op/dtype legality and element sizes from
//! `reduce_alu`'s [`ReduceOp`] / [`ReduceDtype`]; the field masks are
//! checked against the golden NI (`masks_match_the_golden_ni`).
//!
//! Slot storage: the per-slot arrays hold `communicators` slots rounded up
//! to a power of two (at least 2), not the map's 16, and are indexed by the
//! low bits of the 4-bit slot number: a slot past the last is never written
//! (its registers are unmapped, so they read as reset: zero, never
//! enabled), and a descriptor's or fragment's slot number with higher bits
//! set finds a disabled slot (`q_in`, `fq_in`: BAD_COMM, and `fq_ctrl`
//! reads zero; the other `fq_*` of such a slot are not meaningful and the
//! NI rejects the fragment on ENABLE first). Every mux reading a slot
//! (the write check, the read, the checked descriptor's, the receive
//! path's) is then `communicators`-wide.
//!
//! Structure: one generated body, `hdl/templates/allreduce/ar_check.v`,
//! with [`ArSched`] as a rust-hdl child. Simulated with Verilator only
//! (`exanet cosim ar_check`, against the golden NI's registers and engine).
//!
//! Parameters ([`ArCheckParams`]): communicator slots, the largest vector,
//! address bits and the torus dimensions (the golden `NiParams` keys
//! `ni.ar_communicators`, `ni.ar_max_vector_bytes`, `ni.addr_bits`,
//! `ni.torus_dims`).

use super::ar_sched::{ArSched, ArSchedParams};
use crate::emit::{emit, Emitted};
use anyhow::{bail, Context, Result};
use askama::Template;
use exanet_sim::allreduce::engine::{ArStatus, MAX_COMMUNICATORS};
use exanet_sim::allreduce::reduce_alu::{ReduceDtype, ReduceOp};
use exanet_sim::ni::params::NiParams;
use exanet_sim::ni::regs;
use exanet_sim::packet::coords;
use rust_hdl::prelude::*;
use serde::{Deserialize, Serialize};

/// Masks a communicator slot register keeps of a write, by
/// [`regs::AR_COMM_FIELDS`] order (origin, extent, rank, ctrl, scratch lo, hi,
/// size); the golden NI's (`masks_match_the_golden_ni`).
pub const COMM_MASKS: [u32; 7] = [
    0x0000_0FFF,
    0x001F_1F1F,
    0x0000_0FFF,
    0x8000_FFFF,
    0xFFFF_FFFF,
    0x0000_03FF,
    0xFFFF_FFFF,
];

/// Parameters of `ar_check`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ArCheckParams {
    /// Communicator slots, 1..=16.
    pub communicators: usize,
    /// Largest vector in bytes, 8..=2^30.
    pub max_vector_bytes: usize,
    /// Address bits of the memory, 32..=42.
    pub addr_bits: u32,
    /// Torus dimensions, 1..=16 each.
    pub dims: [usize; 3],
}

impl Default for ArCheckParams {
    /// The 8×4×4 machine with the golden NI's engine defaults.
    fn default() -> Self {
        let n = NiParams::default();
        ArCheckParams {
            communicators: 4,
            max_vector_bytes: n.ar_max_vector_bytes,
            addr_bits: n.addr_bits,
            dims: n.torus_dims,
        }
    }
}

impl ArCheckParams {
    /// The block of an NI's parameters (`ni.ar_communicators` > 0).
    pub fn of(n: &NiParams) -> Self {
        ArCheckParams {
            communicators: n.ar_communicators,
            max_vector_bytes: n.ar_max_vector_bytes,
            addr_bits: n.addr_bits,
            dims: n.torus_dims,
        }
    }

    /// The golden NI these parameters describe (engine on).
    pub fn ni_params(&self) -> NiParams {
        NiParams {
            ar_communicators: self.communicators,
            ar_max_vector_bytes: self.max_vector_bytes,
            addr_bits: self.addr_bits,
            torus_dims: self.dims,
            ..NiParams::default()
        }
    }

    /// Reject an unsupported point, naming the key and value.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_COMMUNICATORS).contains(&self.communicators) {
            bail!(
                "ar_check.communicators = {}: must be 1..={MAX_COMMUNICATORS}",
                self.communicators
            );
        }
        if !(8..=1 << 30).contains(&self.max_vector_bytes) {
            bail!(
                "ar_check.max_vector_bytes = {}: must be 8..=2^30",
                self.max_vector_bytes
            );
        }
        if !(32..=42).contains(&self.addr_bits) {
            bail!("ar_check.addr_bits = {}: must be 32..=42", self.addr_bits);
        }
        if self.dims.iter().any(|&d| !(1..=16).contains(&d)) {
            bail!("ar_check.dims = {:?}: each must be 1..=16", self.dims);
        }
        self.ni_params().validate()
    }

    /// The sequencer's size: the whole torus.
    pub fn sched(&self) -> ArSchedParams {
        ArSchedParams {
            max_ranks: self.dims.iter().product(),
        }
    }
}

/// A register offset as a 12-bit Verilog literal.
fn h12(v: u32) -> String {
    format!("12'h{v:03X}")
}

/// Numbers and codes for the template, all from the golden definitions.
struct Keys {
    /// dims as 5-bit literals.
    dim: [String; 3],
    /// `node` bit ranges of x, y, z.
    me: [String; 3],
    ab: u32,
    maxv: String,
    thr_reset: String,
    a_thr: String,
    a_tmo: String,
    a_comm: String,
    a_comm_end: String,
    /// Bit ranges of `wr_addr` holding the slot and the field.
    slot_bits: String,
    /// Slot arrays' depth: the communicators rounded up to a power of two
    /// (at least 2), and its log2, the bits of a slot number indexing them.
    ns: usize,
    sx: usize,
    /// The high bits of `r_slot` the read does not use (none at 16 slots).
    unused_hi: String,
    field_bits: String,
    /// Field numbers (register offset / 4 inside a slot).
    f_origin: usize,
    f_extent: usize,
    f_rank: usize,
    f_ctrl: usize,
    f_slo: usize,
    f_shi: usize,
    f_ssize: usize,
    masks: Vec<String>,
    /// `{op, dtype}` pairs that are legal, as 6-bit literals.
    legal: Vec<String>,
    /// dtype code → log2 of its element bytes.
    esize: Vec<(String, usize)>,
    st_ok: String,
    st_bad_comm: String,
    st_not_member: String,
    st_bad_type: String,
    st_bad_count: String,
    st_bad_addr: String,
}

#[derive(Template)]
#[template(path = "allreduce/ar_check.v")]
struct ArCheckVerilog {
    k: Keys,
}

impl Keys {
    /// Whether the 4-bit slot number `s` indexes the arrays (its bits above
    /// `sx` are zero); `1'b1` at 16 slots.
    fn inr(&self, s: &str) -> String {
        if self.sx < 4 {
            format!("({s}[3:{}] == {}'d0)", self.sx, 4 - self.sx)
        } else {
            "1'b1".into()
        }
    }
}

fn field_range(f: &coords::Field) -> String {
    format!("[{}:{}]", f.offset + f.width - 1, f.offset)
}

fn keys(p: &ArCheckParams) -> Result<Keys> {
    let stride = regs::AR_COMM_STRIDE;
    if !stride.is_power_of_two() || !regs::AR_COMM_BASE.is_multiple_of(stride) {
        bail!("regs::AR_COMM_STRIDE / AR_COMM_BASE: the slot decode needs an aligned power-of-two stride");
    }
    let sb = stride.trailing_zeros();
    let st = |s: ArStatus| format!("3'd{}", s as u8);
    let mut legal = Vec::new();
    for o in ReduceOp::ALL {
        for d in ReduceDtype::ALL {
            if d.supports(o) {
                legal.push(format!("6'd{}", o.code() << 3 | d.code()));
            }
        }
    }
    let ns = p.communicators.next_power_of_two().max(2);
    let sx = ns.trailing_zeros() as usize;
    Ok(Keys {
        ns,
        sx,
        unused_hi: if sx < 4 {
            format!(", r_slot[3:{sx}]")
        } else {
            String::new()
        },
        dim: p.dims.map(|d| format!("5'd{d}")),
        me: [
            field_range(&coords::X),
            field_range(&coords::Y),
            field_range(&coords::Z),
        ],
        ab: p.addr_bits,
        maxv: format!("35'd{}", p.max_vector_bytes),
        thr_reset: "32'd4096".into(),
        a_thr: h12(regs::AR_THRESHOLD),
        a_tmo: h12(regs::AR_TIMEOUT),
        a_comm: h12(regs::AR_COMM_BASE),
        a_comm_end: h12(regs::AR_COMM_BASE + stride * p.communicators as u32),
        slot_bits: format!("[{}:{}]", sb + 3, sb),
        field_bits: format!("[{}:2]", sb - 1),
        f_origin: (regs::AR_ORIGIN / 4) as usize,
        f_extent: (regs::AR_EXTENT / 4) as usize,
        f_rank: (regs::AR_RANK / 4) as usize,
        f_ctrl: (regs::AR_CTRL / 4) as usize,
        f_slo: (regs::AR_SCRATCH_LO / 4) as usize,
        f_shi: (regs::AR_SCRATCH_HI / 4) as usize,
        f_ssize: (regs::AR_SCRATCH_SIZE / 4) as usize,
        masks: COMM_MASKS.iter().map(|m| format!("32'h{m:08X}")).collect(),
        legal,
        esize: ReduceDtype::ALL
            .iter()
            .map(|d| {
                (
                    format!("3'd{}", d.code()),
                    (d.bits() / 8).trailing_zeros() as usize,
                )
            })
            .collect(),
        st_ok: st(ArStatus::Ok),
        st_bad_comm: st(ArStatus::BadComm),
        st_not_member: st(ArStatus::NotMember),
        st_bad_type: st(ArStatus::BadType),
        st_bad_count: st(ArStatus::BadCount),
        st_bad_addr: st(ArStatus::BadAddr),
    })
}

fn ar_check_body(p: &ArCheckParams) -> Result<String> {
    p.validate()?;
    ArCheckVerilog { k: keys(p)? }
        .render()
        .context("rendering the template templates/allreduce/ar_check.v")
}

/// The registers and the descriptor check.
#[derive(LogicBlock)]
pub struct ArCheck {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// This node's coordinates.
    pub node: Signal<In, Bits<22>>,
    /// Register write.
    pub wr: Signal<In, bool>,
    /// Node-page offset of the write.
    pub wr_addr: Signal<In, Bits<12>>,
    /// Value written.
    pub wr_data: Signal<In, Bits<32>>,
    /// The write is taken (else SLVERR, no effect).
    pub wr_ok: Signal<Out, bool>,
    /// Node-page offset of a read.
    pub rd_addr: Signal<In, Bits<12>>,
    /// Value read.
    pub rd_data: Signal<Out, Bits<32>>,
    /// The read address is one of these registers.
    pub rd_ok: Signal<Out, bool>,
    /// Check the descriptor on `d_*`.
    pub chk: Signal<In, bool>,
    /// Op code.
    pub d_op: Signal<In, Bits<3>>,
    /// Dtype code.
    pub d_dtype: Signal<In, Bits<3>>,
    /// Element count.
    pub d_count: Signal<In, Bits<32>>,
    /// Source address.
    pub d_src: Signal<In, Bits<42>>,
    /// Destination address.
    pub d_dst: Signal<In, Bits<42>>,
    /// Communicator slot.
    pub d_comm: Signal<In, Bits<4>>,
    /// PDID of the posting channel.
    pub d_pdid: Signal<In, Bits<16>>,
    /// A check is in progress.
    pub busy: Signal<Out, bool>,
    /// The check is over (one cycle).
    pub done: Signal<Out, bool>,
    /// Its [`ArStatus`] code.
    pub status: Signal<Out, Bits<3>>,
    /// The checked descriptor's slot holds a box of one rank (with `done`).
    pub one: Signal<Out, bool>,
    /// The checked vector's bytes, count × element size (with `done` and
    /// status OK, at most `max_vector_bytes` ≤ 2^30).
    pub bytes: Signal<Out, Bits<31>>,
    /// The checked descriptor's source address (held until the next `chk`).
    pub src: Signal<Out, Bits<42>>,
    /// The checked descriptor's destination address (held likewise).
    pub dst: Signal<Out, Bits<42>>,
    /// Walk the checked descriptor's steps again, for its collective (one
    /// cycle, after `done` with status OK).
    pub run: Signal<In, bool>,
    /// A collective of the checked descriptor runs: an AR_CTRL write to its
    /// slot is refused (golden `set_communicator`), and the steps advance
    /// on `run_next` only.
    pub run_on: Signal<In, bool>,
    /// Take the step presented.
    pub run_next: Signal<In, bool>,
    /// Advance the checked descriptor's slot's sequence number (a
    /// collective that passed the check has completed).
    pub seq_adv: Signal<In, bool>,
    /// A step is presented (`st_*`).
    pub st_valid: Signal<Out, bool>,
    /// The step list is over.
    pub st_done: Signal<Out, bool>,
    /// The step's index (the fragments' footer flags).
    pub st_index: Signal<Out, Bits<8>>,
    /// Its send range, in elements (half open).
    pub st_send_lo: Signal<Out, Bits<32>>,
    /// End of the send range.
    pub st_send_hi: Signal<Out, Bits<32>>,
    /// The step receives nothing.
    pub st_recv_empty: Signal<Out, bool>,
    /// Where the send range lands in the partner's bank, in elements.
    pub st_their_off: Signal<Out, Bits<36>>,
    /// The partner's coordinates (this node's fpga and reserved bits).
    pub st_dest: Signal<Out, Bits<22>>,
    /// Its receive range, in elements (half open; empty when equal).
    pub st_recv_lo: Signal<Out, Bits<32>>,
    /// End of the receive range.
    pub st_recv_hi: Signal<Out, Bits<32>>,
    /// The received bytes are combined with the partial (else stored).
    pub st_combine: Signal<Out, bool>,
    /// Where the receive range lies in this rank's bank, in elements.
    pub st_my_off: Signal<Out, Bits<36>>,
    /// The partner's offsets in the box (its rank's digits, 4 bits each:
    /// x, y, z), as the receive records store a fragment's source.
    pub st_partner: Signal<Out, Bits<12>>,
    /// The checked descriptor's slot: its scratch area and half its size
    /// (one bank), in bytes.
    pub run_scratch: Signal<Out, Bits<42>>,
    pub run_half: Signal<Out, Bits<31>>,
    /// The checked descriptor's slot: its PDID.
    pub run_pdid: Signal<Out, Bits<16>>,
    /// Its sequence number (the fragments' footer txid).
    pub run_seq: Signal<Out, Bits<14>>,
    /// The checked descriptor: communicator, op, dtype, log2 of its
    /// element bytes.
    pub run_comm: Signal<Out, Bits<4>>,
    /// Op code.
    pub run_op: Signal<Out, Bits<3>>,
    /// Dtype code.
    pub run_dtype: Signal<Out, Bits<3>>,
    /// log2 of the element bytes.
    pub run_e: Signal<Out, Bits<2>>,
    /// AR_TIMEOUT as it is after this cycle (the value a write taken now
    /// sets): the golden model applies a write before the cycle's time
    /// step.
    pub timeout: Signal<Out, Bits<32>>,
    /// The receive path's look-up: a fragment's communicator id, and its
    /// slot's registers and sequence number.
    pub fq_comm: Signal<In, Bits<4>>,
    pub fq_ctrl: Signal<Out, Bits<32>>,
    pub fq_origin: Signal<Out, Bits<12>>,
    pub fq_extent: Signal<Out, Bits<21>>,
    pub fq_seq: Signal<Out, Bits<14>>,
    pub fq_scratch: Signal<Out, Bits<42>>,
    pub fq_ssize: Signal<Out, Bits<32>>,
    /// An AR_CTRL write is taken this cycle, on slot `clr_slot`.
    pub clr: Signal<Out, bool>,
    pub clr_slot: Signal<Out, Bits<4>>,
    /// The step sequencer, walked for the scratch need.
    pub sched: ArSched,
    _body: String,
}

impl ArCheck {
    /// The block for `p`.
    pub fn new(p: &ArCheckParams) -> Result<Self> {
        Ok(ArCheck {
            clock: Default::default(),
            reset: Default::default(),
            node: Default::default(),
            wr: Default::default(),
            wr_addr: Default::default(),
            wr_data: Default::default(),
            wr_ok: Default::default(),
            rd_addr: Default::default(),
            rd_data: Default::default(),
            rd_ok: Default::default(),
            chk: Default::default(),
            d_op: Default::default(),
            d_dtype: Default::default(),
            d_count: Default::default(),
            d_src: Default::default(),
            d_dst: Default::default(),
            d_comm: Default::default(),
            d_pdid: Default::default(),
            busy: Default::default(),
            done: Default::default(),
            status: Default::default(),
            one: Default::default(),
            bytes: Default::default(),
            src: Default::default(),
            dst: Default::default(),
            run: Default::default(),
            run_on: Default::default(),
            run_next: Default::default(),
            seq_adv: Default::default(),
            st_valid: Default::default(),
            st_done: Default::default(),
            st_index: Default::default(),
            st_send_lo: Default::default(),
            st_send_hi: Default::default(),
            st_recv_empty: Default::default(),
            st_their_off: Default::default(),
            st_dest: Default::default(),
            st_recv_lo: Default::default(),
            st_recv_hi: Default::default(),
            st_combine: Default::default(),
            st_my_off: Default::default(),
            st_partner: Default::default(),
            run_scratch: Default::default(),
            run_half: Default::default(),
            run_pdid: Default::default(),
            run_seq: Default::default(),
            run_comm: Default::default(),
            run_op: Default::default(),
            run_dtype: Default::default(),
            run_e: Default::default(),
            timeout: Default::default(),
            fq_comm: Default::default(),
            fq_ctrl: Default::default(),
            fq_origin: Default::default(),
            fq_extent: Default::default(),
            fq_seq: Default::default(),
            fq_scratch: Default::default(),
            fq_ssize: Default::default(),
            clr: Default::default(),
            clr_slot: Default::default(),
            sched: ArSched::new(&p.sched())?,
            _body: ar_check_body(p)?,
        })
    }
}

impl Logic for ArCheck {
    /// Simulated with Verilator only (see the module doc).
    fn update(&mut self) {}

    fn connect(&mut self) {
        self.wr_ok.connect();
        self.rd_data.connect();
        self.rd_ok.connect();
        self.busy.connect();
        self.done.connect();
        self.status.connect();
        self.one.connect();
        self.bytes.connect();
        self.src.connect();
        self.dst.connect();
        self.st_valid.connect();
        self.st_done.connect();
        self.st_index.connect();
        self.st_send_lo.connect();
        self.st_send_hi.connect();
        self.st_recv_empty.connect();
        self.st_their_off.connect();
        self.st_dest.connect();
        self.st_recv_lo.connect();
        self.st_recv_hi.connect();
        self.st_combine.connect();
        self.st_my_off.connect();
        self.st_partner.connect();
        self.run_scratch.connect();
        self.run_half.connect();
        self.run_pdid.connect();
        self.run_seq.connect();
        self.run_comm.connect();
        self.run_op.connect();
        self.run_dtype.connect();
        self.run_e.connect();
        self.timeout.connect();
        self.fq_ctrl.connect();
        self.fq_origin.connect();
        self.fq_extent.connect();
        self.fq_seq.connect();
        self.fq_scratch.connect();
        self.fq_ssize.connect();
        self.clr.connect();
        self.clr_slot.connect();
        self.sched.clock.connect();
        self.sched.reset.connect();
        self.sched.start.connect();
        self.sched.ranks.connect();
        self.sched.rank.connect();
        self.sched.count.connect();
        self.sched.rsag.connect();
        self.sched.next.connect();
        self.sched.ex.connect();
        self.sched.ey.connect();
        self.sched.rdig.connect();
        self.sched.qdig.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(self._body.clone())
    }
}

/// Top module name of a parameter point.
pub fn ar_check_top_name(p: &ArCheckParams) -> String {
    let [x, y, z] = p.dims;
    format!(
        "exanet_ar_check_c{}_{x}x{y}x{z}_a{}",
        p.communicators, p.addr_bits
    )
}

/// Validate `p` and emit the block as Verilog.
pub fn emit_ar_check(p: &ArCheckParams) -> Result<Emitted> {
    p.validate()?;
    emit(&mut ArCheck::new(p)?, &ar_check_top_name(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;
    use exanet_sim::ni::ni::Ni;
    use exanet_sim::ni::regs::ar_comm_reg;
    use exanet_sim::packet::coords::Coords;

    #[test]
    fn emits_lint_clean_verilog() {
        for (c, dims, ab) in [
            (1, [1, 1, 1], 32),
            (4, [8, 4, 4], 40),
            (16, [16, 16, 16], 42),
        ] {
            let p = ArCheckParams {
                communicators: c,
                dims,
                addr_bits: ab,
                ..Default::default()
            };
            let e = emit_ar_check(&p).unwrap();
            assert_eq!(e.top, ar_check_top_name(&p));
            assert_lint_clean(&e);
        }
    }

    /// The masks the RTL applies are the golden NI's: all ones written to
    /// each field of a disabled slot read back as the mask.
    #[test]
    fn masks_match_the_golden_ni() {
        let p = ArCheckParams::default();
        let mut ni = Ni::new(&p.ni_params(), Coords::default()).unwrap();
        for (i, f) in regs::AR_COMM_FIELDS.into_iter().enumerate() {
            assert_eq!(f as usize / 4, i, "field order");
            let a = ar_comm_reg(1, f);
            if f == regs::AR_CTRL {
                // ENABLE with an all-zero box is refused; without it, kept.
                ni.axil_write_priv(a, 0x7FFF_FFFF);
                assert_eq!(ni.axil_read_priv(a), 0x7FFF_FFFF & COMM_MASKS[i]);
                continue;
            }
            ni.axil_write_priv(a, u32::MAX);
            assert_eq!(ni.axil_read_priv(a), COMM_MASKS[i], "field {i}");
        }
    }

    /// The status codes and the legality table reach the Verilog from the
    /// golden enums only.
    #[test]
    fn codes_come_from_the_golden_definitions() {
        let k = keys(&ArCheckParams::default()).unwrap();
        assert_eq!(k.st_bad_addr, format!("3'd{}", ArStatus::BadAddr as u8));
        // 6 integer-or-float arithmetic ops × 6 types, minus bitwise × float.
        let bitwise = ReduceOp::ALL.iter().filter(|o| o.is_bitwise()).count();
        let float = ReduceDtype::ALL.iter().filter(|d| d.is_float()).count();
        assert_eq!(k.legal.len(), 36 - bitwise * float);
        let v = ar_check_body(&ArCheckParams::default()).unwrap();
        assert!(v.contains(&k.a_comm) && v.contains(&k.a_thr));
    }

    #[test]
    fn unsupported_points_name_key_and_value() {
        let e = emit_ar_check(&ArCheckParams {
            communicators: 17,
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("ar_check.communicators = 17"), "{e}");
        let e = emit_ar_check(&ArCheckParams {
            dims: [0, 4, 4],
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("ar_check.dims = [0, 4, 4]"), "{e}");
    }
}
