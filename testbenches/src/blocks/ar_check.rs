//! Co-simulation bench of `ar_check`, the allreduce engine's registers and
//! descriptor check, against the golden NI (`exanet_sim::ni::Ni` with its
//! engine), transaction by transaction.
//!
//! Stimulus, one transaction at a time (none while a check runs, as the NI
//! holds its AXI4-Lite slave): privileged writes to AR_THRESHOLD,
//! AR_TIMEOUT and every communicator slot register (boxes inside and
//! outside the torus, ranks inside and outside the box and at this node's
//! place, scratch areas inside and past the memory, ENABLE on and off, the
//! slot after the last), reads of the same registers, and descriptors
//! (every op/dtype code, counts 0, 1, at and over the maximum, aligned and
//! misaligned addresses, addresses near the memory's end, unknown and
//! disabled communicators, another PDID, scratch too small for the need).
//!
//! Golden side: each write or read is the golden NI's privileged AXI4-Lite
//! access; a descriptor is staged on channel 0 (its PDID set to the
//! descriptor's) and rung; the completion the golden NI posts gives the
//! status (a descriptor that passes the checks starts a collective, which
//! the bench abandons through the golden timeout and expects OK; a
//! one-rank communicator completes OK at once).
//!
//! Checked: `wr_ok` against the golden response of every write, `rd_ok` /
//! `rd_data` of every read, and `status` at `done` of every check; `done`
//! only after a `chk`, within a hang bound.
//!
//! The collective's walk: after a check that ends OK on a box of more than
//! one rank, the bench pulses `run` and takes the steps as the NI does
//! (`run_on` high, `run_next` drawn each cycle, nothing else meanwhile), and
//! compares every step taken with the golden schedule of the slot's box,
//! rank, count and threshold (`schedule::steps`, `engine::layout_of`, the
//! partner's layout for `st_their_off`, `CommBox::coords_of` for `st_dest`
//! and the partner's box digits for `st_partner`), with the `run_*` codes
//! (slot, op, dtype, element size, scratch, PDID, the slot's golden sequence
//! number); `st_done` after the last step, within a hang bound. Then it
//! pulses `seq_adv` (as the NI does when a collective ends; the golden
//! collective, abandoned through its timeout, advanced the slot's number
//! too). Rare reset pulses between transactions start the golden NI afresh,
//! so a register the reset misses shows on the next read.

use super::ar_sched::golden_steps;
use super::BlockInfo;
use crate::cosim::{cmp, Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_hdl::allreduce::ar_check::{emit_ar_check, ArCheckParams};
use exanet_hdl::emit::Emitted;
use exanet_sim::allreduce::reduce_alu::{ReduceDtype, ReduceOp};
use exanet_sim::allreduce::schedule::{Algorithm, CommBox};
use exanet_sim::ni::ni::Ni;
use exanet_sim::ni::regs::{self, AxilResp, Prot};
use exanet_sim::packet::coords::Coords;
use exanet_sim::point;
use exanet_sim::rng::Rng;
use serde::{Deserialize, Serialize};

/// Registry entry for `exanet cosim ar_check`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "ar_check",
        about: "allreduce engine registers and descriptor check vs the golden NI",
        matrix,
        point,
    }
}

/// Default matrix: one slot on a 1×1×1 machine, the 8×4×4 machine, a
/// non-power-of-two torus with 32-bit addresses.
fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(
        vec![
            "communicators=1,dx=1,dy=1,dz=1",
            "communicators=4",
            "communicators=16,dx=6,dy=3,dz=1,addr_bits=32,max_vector_bytes=4096",
        ],
        point,
    )
}

/// A parameter point (scalar keys).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ArCheckPoint {
    /// Communicator slots.
    pub communicators: usize,
    /// Torus x size.
    pub dx: usize,
    /// Torus y size.
    pub dy: usize,
    /// Torus z size.
    pub dz: usize,
    /// Address bits.
    pub addr_bits: u32,
    /// Largest vector in bytes.
    pub max_vector_bytes: usize,
}

impl Default for ArCheckPoint {
    fn default() -> Self {
        let p = ArCheckParams::default();
        ArCheckPoint {
            communicators: p.communicators,
            dx: p.dims[0],
            dy: p.dims[1],
            dz: p.dims[2],
            addr_bits: p.addr_bits,
            max_vector_bytes: p.max_vector_bytes,
        }
    }
}

impl ArCheckPoint {
    /// The block's parameters.
    pub fn params(&self) -> ArCheckParams {
        ArCheckParams {
            communicators: self.communicators,
            max_vector_bytes: self.max_vector_bytes,
            addr_bits: self.addr_bits,
            dims: [self.dx, self.dy, self.dz],
        }
    }
}

/// Parse a point over the defaults.
fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(ArCheckBench::new(point::parse(text)?)?))
}

/// How often a run reached each case; the integration test asserts each was.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArCheckCoverage {
    /// Checks ended with each status code (OK, BAD_COMM, …, BAD_ADDR).
    pub status: [u64; 6],
    /// ENABLE writes taken and refused.
    pub enables: u64,
    /// ENABLE writes refused.
    pub enables_refused: u64,
    /// Writes refused because the slot was enabled.
    pub locked_writes: u64,
    /// Reads.
    pub reads: u64,
    /// Checks naming an enabled slot.
    pub status_comm_enabled: u64,
    /// Collectives walked to `st_done`, of them with the large-vector
    /// schedule and of a rank count not a power of two; steps compared.
    pub walks: u64,
    pub walks_rsag: u64,
    pub walks_non_pow2: u64,
    pub walk_steps: u64,
    /// Reset pulses between transactions (after the first).
    pub mid_resets: u64,
}

#[derive(Clone)]
struct Ports {
    reset: Port,
    node: Port,
    wr: Port,
    wr_addr: Port,
    wr_data: Port,
    wr_ok: Port,
    rd_addr: Port,
    rd_data: Port,
    rd_ok: Port,
    chk: Port,
    d_op: Port,
    d_dtype: Port,
    d_count: Port,
    d_src: Port,
    d_dst: Port,
    d_comm: Port,
    d_pdid: Port,
    busy: Port,
    done: Port,
    status: Port,
    run: Port,
    run_on: Port,
    run_next: Port,
    seq_adv: Port,
    st_valid: Port,
    st_done: Port,
    /// The step's outputs compared, by name (see [`WALK_PORTS`]).
    st: Vec<Port>,
    /// The `run_*` codes compared, by name (see [`RUN_PORTS`]).
    run_codes: Vec<Port>,
}

/// Step outputs compared at every step taken, with their widths.
const WALK_PORTS: [(&str, u32); 10] = [
    ("st_index", 8),
    ("st_send_lo", 32),
    ("st_send_hi", 32),
    ("st_recv_empty", 1),
    ("st_their_off", 36),
    ("st_dest", 22),
    ("st_recv_lo", 32),
    ("st_recv_hi", 32),
    ("st_combine", 1),
    ("st_my_off", 36),
];

/// Index of `st_partner` after [`WALK_PORTS`] in `Ports::st`.
const ST_PARTNER: usize = WALK_PORTS.len();

/// The collective's codes compared at every step taken, with their widths.
const RUN_PORTS: [(&str, u32); 8] = [
    ("run_scratch", 42),
    ("run_half", 31),
    ("run_pdid", 16),
    ("run_seq", 14),
    ("run_comm", 4),
    ("run_op", 3),
    ("run_dtype", 3),
    ("run_e", 2),
];

/// One golden step of a walk: the values of [`WALK_PORTS`] (`None`: not
/// compared, `st_their_off` of a step that sends nothing) and the partner's
/// box digits `{x, y, z}`.
#[derive(Clone, Debug)]
struct WalkStep {
    vals: [Option<u64>; WALK_PORTS.len()],
    partner: u64,
}

/// Where a walk is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WalkAt {
    /// `run` this cycle.
    Run,
    /// Steps taken on `run_next`.
    Steps,
    /// `seq_adv` this cycle (the collective is over).
    End,
}

/// A collective walked after its check (see the module doc).
#[derive(Clone, Debug)]
struct Walk {
    steps: Vec<WalkStep>,
    codes: [u64; RUN_PORTS.len()],
    pos: usize,
    at: WalkAt,
    /// `run_next` this cycle.
    next: bool,
    waited: u64,
    rsag: bool,
    ranks: usize,
}

/// This cycle's transaction and what the golden NI answered.
#[derive(Clone, Copy, Debug)]
enum Act {
    Idle,
    Reset,
    Write {
        addr: u32,
        ok: bool,
        field: Option<u32>,
    },
    Read {
        addr: u32,
        ok: bool,
        data: u32,
    },
    Check,
    /// A cycle of the collective's walk.
    Walk,
}

/// The `ar_check` bench at one parameter point.
pub struct ArCheckBench {
    pt: ArCheckPoint,
    params: ArCheckParams,
    me: Coords,
    golden: Ni,
    ports: Option<Ports>,
    act: Act,
    /// The status the running check must end with, and cycles waited.
    expect: Option<(u64, u64)>,
    txid: u16,
    /// The walk the running check starts if it ends OK, and the one going on.
    pending_walk: Option<Walk>,
    walk: Option<Walk>,
    cov: ArCheckCoverage,
}

/// Cycles a check may take: the walk of the largest schedule (see the block doc).
const HANG_LIMIT: u64 = 600;

impl ArCheckBench {
    /// A bench for `pt`.
    pub fn new(pt: ArCheckPoint) -> Result<Self> {
        let params = pt.params();
        params.validate()?;
        // A node off the origin in every dimension that has room.
        let d = params.dims;
        let mut me = Coords::default();
        me.set_x((d[0].div_ceil(2) % d[0]) as u8)?;
        me.set_y((d[1].div_ceil(2) % d[1]) as u8)?;
        me.set_z((d[2].div_ceil(2) % d[2]) as u8)?;
        let golden = Ni::new(&params.ni_params(), me)?;
        Ok(ArCheckBench {
            pt,
            params,
            me,
            golden,
            ports: None,
            act: Act::Idle,
            expect: None,
            txid: 0,
            pending_walk: None,
            walk: None,
            cov: ArCheckCoverage::default(),
        })
    }

    /// Cases reached since the last [`Bench::reset`].
    pub fn coverage(&self) -> ArCheckCoverage {
        self.cov.clone()
    }

    fn slot_reg(&self, k: usize, f: u32) -> u32 {
        regs::ar_comm_reg(k, f)
    }

    /// A golden slot register's value.
    fn g(&self, k: usize, f: u32) -> u32 {
        self.golden.axil_read_priv(regs::ar_comm_reg(k, f))
    }

    /// A write to draw: (address, value).
    fn draw_write(&self, rng: &mut Rng) -> (u32, u32) {
        let d = self.params.dims;
        let c = self.params.communicators;
        if rng.below(10) == 0 {
            let a = if rng.chance(0.5) {
                regs::AR_THRESHOLD
            } else {
                regs::AR_TIMEOUT
            };
            let v = match rng.below(4) {
                0 => 0,
                1 => 64,
                2 => 4096,
                _ => rng.bits(32) as u32,
            };
            return (a, v);
        }
        // Slot c (one past the last) now and then: unmapped.
        let k = if rng.below(20) == 0 {
            c
        } else {
            rng.below(c as u64) as usize
        };
        // Every slot field, and the unmapped word after them.
        let n = regs::AR_COMM_FIELDS.len() as u64;
        // Disabling first makes the other fields writable.
        let f = if k < c && self.g(k, regs::AR_CTRL) >> 31 == 1 && rng.chance(0.3) {
            regs::AR_CTRL
        } else {
            match rng.below(n + 1) {
                i if i < n => regs::AR_COMM_FIELDS[i as usize],
                _ => 4 * n as u32,
            }
        };
        let bad = rng.below(12) == 0;
        let here = [self.me.x() as u64, self.me.y() as u64, self.me.z() as u64];
        // Half the origins at this node or one before it (modulo the
        // torus): this node is then in most boxes, also those of extent 1.
        let dim = |i: usize, rng: &mut Rng| {
            if bad {
                rng.below(17) as u32
            } else if rng.chance(0.5) {
                ((here[i] + d[i] as u64 - rng.below(2)) % d[i] as u64) as u32
            } else {
                rng.below(d[i] as u64) as u32
            }
        };
        let v = match f {
            regs::AR_ORIGIN => dim(0, rng) | dim(1, rng) << 4 | dim(2, rng) << 8,
            regs::AR_EXTENT => {
                let e = |i: usize, rng: &mut Rng| {
                    if bad {
                        rng.below(18) as u32
                    } else {
                        1 + rng.below(d[i] as u64) as u32
                    }
                };
                // An x extent of 1 now and then: the box's digits start at y
                // or z (the digits of 1 and Q's doubling skip x).
                let ex = if !bad && rng.below(8) == 0 {
                    1
                } else {
                    e(0, rng)
                };
                let v = ex | e(1, rng) << 8 | e(2, rng) << 16;
                if rng.below(8) == 0 {
                    v | (rng.bits(32) as u32 & 0xE0E0_E0E0)
                } else {
                    v
                }
            }
            regs::AR_RANK => {
                let o = self.g(k.min(c - 1), regs::AR_ORIGIN) as usize;
                let x = self.g(k.min(c - 1), regs::AR_EXTENT) as usize;
                let b = CommBox {
                    origin: [o & 0xF, o >> 4 & 0xF, o >> 8 & 0xF],
                    extent: [x & 0x1F, x >> 8 & 0x1F, x >> 16 & 0x1F],
                };
                let here = [
                    self.me.x() as usize,
                    self.me.y() as usize,
                    self.me.z() as usize,
                ];
                let mine = (b.validate(d).is_ok())
                    .then(|| b.rank_of(here, d))
                    .flatten();
                match (mine, rng.below(4)) {
                    (Some(r), 0..=2) => r as u32,
                    _ => rng.below(if bad { 8192 } else { 64 }) as u32,
                }
            }
            regs::AR_CTRL => {
                let pdid = 1 + rng.below(3) as u32;
                let en = if rng.below(5) == 0 { 0 } else { 1 << 31 };
                en | pdid
                    | if bad {
                        rng.bits(32) as u32 & 0x7FFF_0000
                    } else {
                        0
                    }
            }
            regs::AR_SCRATCH_LO => (rng.bits(32) as u32) & !0xFFF,
            regs::AR_SCRATCH_HI => {
                if bad {
                    rng.bits(32) as u32
                } else {
                    rng.below(2) as u32
                }
            }
            regs::AR_SCRATCH_SIZE => match rng.below(5) {
                0 => 0,
                1 => 64,
                2 => 1 << 16,
                3 => 1 << 22,
                _ => rng.bits(32) as u32,
            },
            _ => rng.bits(32) as u32,
        };
        (self.slot_reg(k, f), v)
    }

    /// A descriptor to draw: (op, dtype, count, src, dst, comm, pdid).
    fn draw_desc(&self, rng: &mut Rng) -> (u64, u64, u32, u64, u64, u8, u16) {
        let c = self.params.communicators as u64;
        // One in three: a descriptor meant to pass, on an enabled slot, so
        // that collectives are walked often (it may still fail the scratch
        // or address checks).
        let enabled: Vec<usize> = (0..c as usize)
            .filter(|&k| self.g(k, regs::AR_CTRL) >> 31 == 1)
            .collect();
        if !enabled.is_empty() && rng.below(3) == 0 {
            let comm = enabled[rng.below(enabled.len() as u64) as usize];
            let d = ReduceDtype::ALL[rng.below(ReduceDtype::ALL.len() as u64) as usize];
            let ops: Vec<ReduceOp> = ReduceOp::ALL
                .into_iter()
                .filter(|&o| d.supports(o))
                .collect();
            let op = ops[rng.below(ops.len() as u64) as usize].code();
            let (dtype, esize) = (d.code(), d.bits() / 8);
            let maxn = (self.params.max_vector_bytes / esize) as u64;
            let count = if rng.chance(0.5) {
                1 + rng.below(maxn.min(64))
            } else {
                1 + rng.below(maxn)
            };
            let top = 1u64 << (self.params.addr_bits - 1);
            // Now and then misaligned by a byte or a word (BAD_ADDR of
            // 8-byte types only, for a word).
            let addr = |rng: &mut Rng| match rng.below(10) {
                0 => rng.below(top) | 1,
                1 => rng.below(top) & !7 | 4,
                _ => rng.below(top) & !7,
            };
            let pdid = self.g(comm, regs::AR_CTRL) as u16;
            return (
                op,
                dtype,
                count as u32,
                addr(rng),
                addr(rng),
                comm as u8,
                pdid,
            );
        }
        let op = if rng.below(8) == 0 {
            rng.below(8)
        } else {
            rng.below(6)
        };
        let dtype = if rng.below(8) == 0 {
            rng.below(8)
        } else {
            rng.below(6)
        };
        let esize = if matches!(dtype, 0 | 1 | 4) { 4 } else { 8 };
        let maxn = (self.params.max_vector_bytes / esize) as u64;
        let count = match rng.below(10) {
            0 => 0,
            1..=4 => 1 + rng.below(8),
            5 | 6 => 1 + rng.below(maxn),
            7 => maxn,
            8 => maxn + 1,
            _ => rng.bits(32),
        } as u32;
        let top = 1u64 << self.params.addr_bits;
        let addr = |rng: &mut Rng| match rng.below(10) {
            0 => rng.bits(self.params.addr_bits),
            1 => top.wrapping_sub(esize as u64 * (rng.below(4) + count as u64)) & ((1 << 42) - 1),
            2 => rng.bits(42),
            _ => rng.bits(self.params.addr_bits - 1) & !7,
        };
        let (src, dst) = (addr(rng), addr(rng));
        let comm = if rng.below(10) == 0 {
            rng.below(16)
        } else {
            rng.below(c)
        } as u8;
        let pdid = if rng.below(10) == 0 {
            rng.below(4) as u16
        } else if (comm as u64) < c {
            self.g(comm as usize, regs::AR_CTRL) as u16
        } else {
            1
        };
        (op, dtype, count, src, dst, comm, pdid)
    }

    /// The golden walk of a descriptor about to pass the checks on slot
    /// `comm` (read from the golden registers before it runs).
    fn golden_walk(&self, op: u64, dtype: u64, count: u32, comm: usize) -> Walk {
        let d = self.params.dims;
        let o = self.g(comm, regs::AR_ORIGIN) as usize;
        let x = self.g(comm, regs::AR_EXTENT) as usize;
        let b = CommBox {
            origin: [o & 0xF, o >> 4 & 0xF, o >> 8 & 0xF],
            extent: [x & 0x1F, x >> 8 & 0x1F, x >> 16 & 0x1F],
        };
        let rank = (self.g(comm, regs::AR_RANK) & 0xFFF) as usize;
        // (an undefined dtype fails the check: its walk is dropped)
        let e =
            ReduceDtype::from_code(dtype).map_or(3, |t| (t.bits() / 8).trailing_zeros() as usize);
        let bytes = (count as usize) << e;
        let threshold = self.golden.axil_read_priv(regs::AR_THRESHOLD) as usize;
        let algo = Algorithm::for_size(bytes, threshold);
        let (p, n) = (b.ranks(), count as usize);
        let steps = golden_steps(p, rank, n, algo)
            .into_iter()
            .map(|(s, my_off, their_off)| {
                let c = b.coords_of(s.partner, d);
                let mut dest = self.me;
                dest.set_x(c[0] as u8).expect("inside the torus");
                dest.set_y(c[1] as u8).expect("inside the torus");
                dest.set_z(c[2] as u8).expect("inside the torus");
                let dig = CommBox {
                    origin: [0; 3],
                    extent: b.extent,
                }
                .coords_of(s.partner, b.extent);
                WalkStep {
                    vals: [
                        Some(s.index as u64),
                        Some(s.send.start as u64),
                        Some(s.send.end as u64),
                        Some(s.recv.is_empty() as u64),
                        their_off,
                        Some(dest.to_bits() as u64),
                        Some(s.recv.start as u64),
                        Some(s.recv.end as u64),
                        Some(s.combine as u64),
                        Some(my_off),
                    ],
                    partner: (dig[0] << 8 | dig[1] << 4 | dig[2]) as u64,
                }
            })
            .collect();
        let lo = self.g(comm, regs::AR_SCRATCH_LO) as u64;
        let hi = self.g(comm, regs::AR_SCRATCH_HI) as u64;
        let seq = self
            .golden
            .engine()
            .and_then(|en| en.slot_seq(comm))
            .expect("an enabled slot");
        Walk {
            steps,
            codes: [
                hi << 32 | lo,
                (self.g(comm, regs::AR_SCRATCH_SIZE) >> 1) as u64,
                (self.g(comm, regs::AR_CTRL) & 0xFFFF) as u64,
                seq as u64,
                comm as u64,
                op,
                dtype,
                e as u64,
            ],
            pos: 0,
            at: if p > 1 { WalkAt::Run } else { WalkAt::End },
            next: false,
            waited: 0,
            rsag: algo == Algorithm::ReduceScatterAllgather,
            ranks: p,
        }
    }

    /// The golden status of a descriptor (see the module doc).
    #[allow(clippy::too_many_arguments)]
    fn golden_check(
        &mut self,
        op: u64,
        dtype: u64,
        count: u32,
        src: u64,
        dst: u64,
        comm: u8,
        pdid: u16,
    ) -> u64 {
        self.pending_walk = ((comm as usize) < self.params.communicators
            && self.g(comm as usize, regs::AR_CTRL) >> 31 == 1)
            .then(|| self.golden_walk(op, dtype, count, comm as usize));
        let g = &mut self.golden;
        let ch = regs::ch_page(0);
        g.axil_write_priv(regs::CH_PDID_BASE, pdid as u32);
        let w = |g: &mut Ni, off: u32, v: u64| {
            assert_eq!(g.axil_write(ch + off, v as u32), AxilResp::Okay, "staging");
        };
        w(g, regs::DESC_LADDR_LO, src & 0xFFFF_FFFF);
        w(g, regs::DESC_LADDR_HI, src >> 32);
        w(g, regs::DESC_RADDR_LO, dst & 0xFFFF_FFFF);
        w(g, regs::DESC_RADDR_HI, dst >> 32);
        w(g, regs::DESC_LEN, count as u64);
        w(g, regs::DESC_DEST, comm as u64 | op << 4 | dtype << 7);
        self.txid = (self.txid + 1) & 0x3FFF;
        w(
            g,
            regs::DESC_CTRL,
            exanet_sim::ni::descriptor::OP_ALLREDUCE as u64 | (self.txid as u64) << 16,
        );
        assert_eq!(g.axil_write(ch + regs::DOORBELL, 0), AxilResp::Okay);
        let pop = |g: &mut Ni| -> Option<u32> {
            if g.axil_read(regs::CQ_PAGE + regs::CQ_COUNT) == 0 {
                return None;
            }
            let w0 = g.axil_read(regs::CQ_PAGE + regs::CQ_W0);
            g.axil_write(regs::CQ_PAGE + regs::CQ_POP, 0);
            Some(w0 >> 8 & 0xF)
        };
        if let Some(code) = pop(g) {
            return code as u64;
        }
        // Passed the checks and started: abandon it through the timeout.
        let tmo = g.axil_read_priv(regs::AR_TIMEOUT);
        g.axil_write_priv(regs::AR_TIMEOUT, 1);
        g.advance_time(1);
        g.axil_write_priv(regs::AR_TIMEOUT, tmo);
        let code = pop(g).expect("a timed-out collective completes");
        assert_eq!(
            code,
            exanet_sim::allreduce::engine::ArStatus::Timeout as u32,
            "abandoned"
        );
        exanet_sim::allreduce::engine::ArStatus::Ok as u64
    }
}

impl Bench for ArCheckBench {
    fn block(&self) -> &str {
        "ar_check"
    }

    fn point(&self) -> String {
        point::to_text(&self.pt)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_ar_check(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        self.ports = Some(Ports {
            reset: sim.port_w("reset", 1)?,
            node: sim.port_w("node", 22)?,
            wr: sim.port_w("wr", 1)?,
            wr_addr: sim.port_w("wr_addr", 12)?,
            wr_data: sim.port_w("wr_data", 32)?,
            wr_ok: sim.port_w("wr_ok", 1)?,
            rd_addr: sim.port_w("rd_addr", 12)?,
            rd_data: sim.port_w("rd_data", 32)?,
            rd_ok: sim.port_w("rd_ok", 1)?,
            chk: sim.port_w("chk", 1)?,
            d_op: sim.port_w("d_op", 3)?,
            d_dtype: sim.port_w("d_dtype", 3)?,
            d_count: sim.port_w("d_count", 32)?,
            d_src: sim.port_w("d_src", 42)?,
            d_dst: sim.port_w("d_dst", 42)?,
            d_comm: sim.port_w("d_comm", 4)?,
            d_pdid: sim.port_w("d_pdid", 16)?,
            busy: sim.port_w("busy", 1)?,
            done: sim.port_w("done", 1)?,
            status: sim.port_w("status", 3)?,
            run: sim.port_w("run", 1)?,
            run_on: sim.port_w("run_on", 1)?,
            run_next: sim.port_w("run_next", 1)?,
            seq_adv: sim.port_w("seq_adv", 1)?,
            st_valid: sim.port_w("st_valid", 1)?,
            st_done: sim.port_w("st_done", 1)?,
            st: WALK_PORTS
                .iter()
                .chain(&[("st_partner", 12)])
                .map(|&(n, w)| sim.port_w(n, w))
                .collect::<Result<_>>()?,
            run_codes: RUN_PORTS
                .iter()
                .map(|&(n, w)| sim.port_w(n, w))
                .collect::<Result<_>>()?,
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.golden = Ni::new(&self.params.ni_params(), self.me).expect("validated in new");
        self.act = Act::Idle;
        self.expect = None;
        self.txid = 0;
        self.pending_walk = None;
        self.walk = None;
        self.cov = ArCheckCoverage::default();
    }

    fn drive(&mut self, rng: &mut Rng, cycle: u64) {
        let p = self.ports.clone().expect("bound");
        p.node.set(self.me.to_bits() as u64);
        p.wr.set(0);
        p.chk.set(0);
        p.reset.set(0);
        p.run.set(0);
        p.run_on.set(0);
        p.run_next.set(0);
        p.seq_adv.set(0);
        self.act = Act::Idle;
        if cycle == 0 {
            p.reset.set(1);
            self.act = Act::Reset;
            return;
        }
        if self.expect.is_some() {
            return;
        }
        if let Some(w) = self.walk.as_mut() {
            self.act = Act::Walk;
            match w.at {
                WalkAt::Run => p.run.set(1),
                WalkAt::Steps => {
                    w.next = rng.chance(0.6);
                    p.run_on.set(1);
                    p.run_next.set(w.next as u64);
                }
                WalkAt::End => p.seq_adv.set(1),
            }
            return;
        }
        if rng.below(2000) == 0 {
            p.reset.set(1);
            self.act = Act::Reset;
            self.golden = Ni::new(&self.params.ni_params(), self.me).expect("validated in new");
            self.cov.mid_resets += 1;
            return;
        }
        match rng.below(10) {
            0..=4 => {
                let (addr, v) = self.draw_write(rng);
                let ok = self.golden.axil_write_prot(addr, v, Prot::Privileged) == AxilResp::Okay;
                p.wr.set(1);
                p.wr_addr.set(addr as u64);
                p.wr_data.set(v as u64);
                let field = (addr >= regs::AR_COMM_BASE).then_some(addr % regs::AR_COMM_STRIDE);
                if field == Some(regs::AR_CTRL) && v >> 31 == 1 {
                    self.cov.enables += 1;
                    if !ok {
                        self.cov.enables_refused += 1;
                    }
                }
                self.act = Act::Write { addr, ok, field };
            }
            5 | 6 => {
                let c = self.params.communicators as u32;
                let addr = match rng.below(6) {
                    0 => regs::AR_THRESHOLD,
                    1 => regs::AR_TIMEOUT,
                    2 => regs::AR_COMM_BASE + rng.below(4 * (c as u64 + 1) * 8) as u32,
                    _ => regs::ar_comm_reg(rng.below(c as u64) as usize, 4 * rng.below(7) as u32),
                };
                let (data, resp) = self.golden.axil_read_prot(addr, Prot::Privileged);
                p.rd_addr.set(addr as u64);
                self.cov.reads += 1;
                self.act = Act::Read {
                    addr,
                    ok: resp == AxilResp::Okay,
                    data,
                };
            }
            _ => {
                let (op, dtype, count, src, dst, comm, pdid) = self.draw_desc(rng);
                if (comm as usize) < self.params.communicators {
                    self.cov.status_comm_enabled +=
                        (self.g(comm as usize, regs::AR_CTRL) >> 31) as u64;
                }
                let status = self.golden_check(op, dtype, count, src, dst, comm, pdid);
                if status != exanet_sim::allreduce::engine::ArStatus::Ok as u64 {
                    self.pending_walk = None;
                }
                p.chk.set(1);
                p.d_op.set(op);
                p.d_dtype.set(dtype);
                p.d_count.set(count as u64);
                p.d_src.set(src);
                p.d_dst.set(dst);
                p.d_comm.set(comm as u64);
                p.d_pdid.set(pdid as u64);
                self.expect = Some((status, 0));
                self.act = Act::Check;
            }
        }
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let p = self.ports.as_ref().expect("bound");
        match self.act {
            Act::Write { addr, ok, field } => {
                if let Some(m) = cmp(
                    cycle,
                    &format!("wr_ok @{addr:#x}"),
                    ok as u64,
                    p.wr_ok.get(),
                ) {
                    return Some(m);
                }
                if !ok
                    && field
                        .is_some_and(|f| f != regs::AR_CTRL && regs::AR_COMM_FIELDS.contains(&f))
                {
                    self.cov.locked_writes += 1;
                }
            }
            Act::Read { addr, ok, data } => {
                if let Some(m) = cmp(
                    cycle,
                    &format!("rd_ok @{addr:#x}"),
                    ok as u64,
                    p.rd_ok.get(),
                ) {
                    return Some(m);
                }
                if ok {
                    if let Some(m) = cmp(
                        cycle,
                        &format!("rd_data @{addr:#x}"),
                        data as u64,
                        p.rd_data.get(),
                    ) {
                        return Some(m);
                    }
                }
            }
            Act::Walk => return self.check_walk(cycle),
            _ => {}
        }
        let done = p.done.get() == 1;
        match self.expect.as_mut() {
            None if done => Some(Mismatch {
                cycle,
                port: "done".into(),
                expected: "no check running".into(),
                actual: "done".into(),
            }),
            None => None,
            Some((status, waited)) => {
                if done {
                    let (want, got) = (*status, p.status.get());
                    self.expect = None;
                    if let Some(m) = cmp(cycle, "status", want, got) {
                        return Some(m);
                    }
                    self.walk = self.pending_walk.take();
                    self.cov.status[want as usize] += 1;
                    return None;
                }
                if *waited > 0 && p.busy.get() == 0 {
                    return Some(Mismatch {
                        cycle,
                        port: "busy".into(),
                        expected: "1 until done".into(),
                        actual: "0".into(),
                    });
                }
                *waited += 1;
                if *waited > HANG_LIMIT {
                    return Some(Mismatch {
                        cycle,
                        port: "done".into(),
                        expected: format!("within {HANG_LIMIT} cycles"),
                        actual: "nothing: a hang".into(),
                    });
                }
                None
            }
        }
    }

    fn advance(&mut self) {}
}

impl ArCheckBench {
    /// A cycle of the walk: the step taken (if any) against the golden one.
    fn check_walk(&mut self, cycle: u64) -> Option<Mismatch> {
        let p = self.ports.as_ref().expect("bound");
        let w = self.walk.as_mut().expect("walking");
        match w.at {
            WalkAt::Run => {
                w.at = WalkAt::Steps;
                None
            }
            WalkAt::End => {
                self.walk = None;
                None
            }
            WalkAt::Steps => {
                let (valid, sdone) = (p.st_valid.get() == 1, p.st_done.get() == 1);
                let n = w.steps.len();
                if sdone {
                    if valid || w.pos != n {
                        return Some(Mismatch {
                            cycle,
                            port: "st_done".into(),
                            expected: format!("after {n} steps"),
                            actual: format!("after {} (st_valid {valid})", w.pos),
                        });
                    }
                    let c = &mut self.cov;
                    c.walks += 1;
                    c.walks_rsag += w.rsag as u64;
                    c.walks_non_pow2 += !w.ranks.is_power_of_two() as u64;
                    w.at = WalkAt::End;
                    return None;
                }
                if !valid {
                    w.waited += 1;
                    if w.waited > HANG_LIMIT {
                        return Some(Mismatch {
                            cycle,
                            port: "st_valid".into(),
                            expected: format!("step {} of {n} within {HANG_LIMIT} cycles", w.pos),
                            actual: "nothing: a hang".into(),
                        });
                    }
                    return None;
                }
                w.waited = 0;
                if !w.next {
                    return None;
                }
                let Some(e) = w.steps.get(w.pos) else {
                    return Some(Mismatch {
                        cycle,
                        port: "st_valid".into(),
                        expected: format!("st_done after {n} steps"),
                        actual: "one more step".into(),
                    });
                };
                let at = |name: &str| format!("{name} (step {} of {n})", w.pos);
                for (i, &(name, _)) in WALK_PORTS.iter().enumerate() {
                    if let Some(want) = e.vals[i] {
                        if let Some(m) = cmp(cycle, &at(name), want, p.st[i].get()) {
                            return Some(m);
                        }
                    }
                }
                if let Some(m) = cmp(cycle, &at("st_partner"), e.partner, p.st[ST_PARTNER].get()) {
                    return Some(m);
                }
                for (i, &(name, _)) in RUN_PORTS.iter().enumerate() {
                    if let Some(m) = cmp(cycle, &at(name), w.codes[i], p.run_codes[i].get()) {
                        return Some(m);
                    }
                }
                w.pos += 1;
                self.cov.walk_steps += 1;
                None
            }
        }
    }
}
