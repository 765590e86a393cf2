//! `link_tx`: the sending half of a link end (golden model
//! `exanet_sim::link::link_tx`, whose `outputs`/`tick` it matches cycle by
//! cycle; frame format and protocol in `exanet_sim::link`).
//!
//! Ports (top module `exanet_link_tx_f<flit>_v<vcs>_n<frame>_<hash>`):
//! - `clock`; `reset` (synchronous: power-on state);
//! - router side (the router's network-port conventions): `in_valid`,
//!   `in_data[flit_bits]`, `in_head`, `in_tail`, `in_vc[4]` (a flit, sent
//!   only with a credit of this block's `tx_buffer_flits`-deep VC buffer);
//!   `credit_out_valid`, `credit_out_vc[4]` (a flit left that buffer);
//! - PHY side: `phy_tx_valid`, `phy_tx_data[64]`, `phy_tx_ctrl` (held until
//!   taken), input `phy_tx_ready`;
//! - status of the local `link_rx` (the golden `RxStatus`, registered
//!   there): `st_state[2]`, `st_heard`, `st_peer_valid`,
//!   `st_peer_fields[32]` (the far end's control word fields, decoded
//!   here; fields that are not a control word are ignored), `st_ack_seq[6]`,
//!   `st_nack_count[8]`, `st_urgent[8]`, `st_freed[8·vcs]`;
//! - counters (the send half of `LinkCounters`, 32-bit wrapping):
//!   `cnt_frames_sent`, `cnt_retransmissions`, `cnt_timeouts`,
//!   `cnt_bad_acks`, `cnt_overflows`, `cnt_words_replayed`, `cnt_ctrl_sent`.
//!
//! Every output is a register. A flit arriving at an empty VC buffer can
//! leave in the same cycle (the buffer's read is bypassed), as in the model.
//!
//! Structure: the model's `tick` transcribed into one combinational block
//! in the same order (peer control word, retransmit timer, enqueue, one
//! word of closing a frame after a drop, the word slot); the retry storage
//! is the `retry_buffer` block (child `retry`), which applies its inputs in
//! the order ack, stop, start, take, push, close and reports the state
//! after the ack (`frames_left`, `used_left`, `replaying`) that the slot
//! decides from. The VC buffers share one RAM (distributed) addressed by
//! `{vc, pointer}`. CRC-32 over a 64-bit word per cycle and the control-word
//! seal are XOR trees whose masks are computed here from the golden
//! `crc_word` and `seal` (both are linear over GF(2) apart from the seal's
//! final xor), and every field position from the golden `pack` functions.

use super::retry_buffer::{RetryBufferParams, RetryBufferRtl, USED_BITS};
use super::xor_net::XorNet;
use crate::emit::{emit, Emitted};
use anyhow::{bail, Context, Result};
use askama::Template;
use exanet_sim::link::{
    crc_word, seal, training_fields, Control, LinkParams, LinkState, Trailer, FRAME_CRC_INIT,
    MAX_OUTSTANDING, SEQ_BITS, SEQ_MOD, TAIL_NONE, TAIL_SLOTS,
};
use rust_hdl::prelude::*;

/// Largest `tx_buffer_flits` the RTL supports (its RAM is `vcs` × the next
/// power of two).
pub const MAX_TX_BUFFER_FLITS: usize = 1024;

/// `templates/link/link_tx.v`; every constant from the golden model.
#[derive(Template)]
#[template(path = "link/link_tx.v")]
struct Body {
    flit_bits: usize,
    flit_m1: usize,
    vcs: usize,
    vcs_m1: usize,
    /// Credit-slot keys: 11 bits per VC (8 freed, 3 rank).
    keys_bits: usize,
    keys_m1: usize,
    wpf: usize,
    multi_word: &'static str,
    /// Words 1.. of a flit: `flit_bits - 64` bits (unused with one word).
    rest_bits: usize,
    rest_m1: usize,
    /// `dword =` the word `cur_k` (1..wpf-1) of those.
    cur_word: String,
    /// The data-word CRC as an XOR network: `(wire, expression)`, and each
    /// output bit's expression.
    crc_wires: Vec<(String, String)>,
    crc_outs: Vec<String>,
    seal_rows: Vec<(String, String, u8)>,
    crc_init: String,
    qw: usize,
    qw_m1: usize,
    qw_m2: usize,
    qdepth_all_m1: usize,
    qa: usize,
    qa_m1: usize,
    qc: usize,
    vcs_qa: usize,
    vcs_qa_m1: usize,
    vcs_qc: usize,
    vcs_qc_m1: usize,
    vcs8: usize,
    vcs8_m1: usize,
    qaddr_bits: usize,
    qaddr_m1: usize,
    enq_addr_expr: String,
    front_addr_expr: String,
    txb: usize,
    txb_m1: usize,
    rxb: usize,
    seq: usize,
    seq_m1: usize,
    seq_max: usize,
    tails_w: usize,
    tails_m1: usize,
    tails_a_lo: usize,
    tails_a_lo_m1: usize,
    tails_none: String,
    tail_slots: usize,
    tail_slots_m1: usize,
    frame_flits: usize,
    tw: usize,
    tw_m1: usize,
    timeout: usize,
    sw: usize,
    sw_m1: usize,
    since_max: usize,
    ack_interval: usize,
    refresh: usize,
    keepalive: usize,
    batch_cmp: String,
    max_outstanding: usize,
    used_bits: usize,
    room_limit: usize,
    st_down: u8,
    st_train: u8,
    st_up: u8,
    train_ok: String,
    train_no: String,
    c_base: String,
    c_rsv_mask: String,
    c_nack: u32,
    c_ack: u32,
    c_ack_hi: u32,
    c_vca: u32,
    c_vca_hi: u32,
    c_fra: u32,
    c_fra_hi: u32,
    c_vcb: u32,
    c_vcb_hi: u32,
    c_frb: u32,
    c_frb_hi: u32,
    t_base: String,
    t_seq: u32,
    t_seq_hi: u32,
    t_vc: u32,
    t_vc_hi: u32,
    t_head: u32,
    t_ta: u32,
    t_ta_hi: u32,
    t_tb: u32,
    t_tb_hi: u32,
    t_tc: u32,
    t_tc_hi: u32,
}

/// Bits to hold `0..=n`.
fn bits_for(n: usize) -> usize {
    (usize::BITS - n.leading_zeros()).max(1) as usize
}

/// `(lsb, msb)` of a field: the bits `set(ones)` changes against `set(0)`,
/// checked to be `width` contiguous bits.
fn field(name: &str, width: u32, set: impl Fn(u32) -> u32) -> Result<(u32, u32)> {
    let mask = set((1 << width) - 1) ^ set(0);
    let lsb = mask.trailing_zeros();
    if mask.count_ones() != width || mask >> lsb != (1 << width) - 1 {
        bail!("golden field `{name}` is not {width} contiguous bits: {mask:#x}");
    }
    Ok((lsb, lsb + width - 1))
}

/// Rows of the CRC-32 register update over one data word: output bit `o`
/// is the XOR of the state bits in `.0` and the data bits in `.1`.
pub fn crc_word_masks() -> Vec<(u32, u64)> {
    (0..32)
        .map(|o| {
            let s = (0..32).fold(0u32, |m, i| m | (crc_word(1 << i, 0) >> o & 1) << i);
            let d = (0..64).fold(0u64, |m, i| {
                m | ((crc_word(0, 1 << i) >> o & 1) as u64) << i
            });
            (s, d)
        })
        .collect()
}

/// Rows of the seal's CRC field over `(state, fields)`, plus the constant
/// (`seal(0, 0)`, the final xor through the map).
pub fn seal_masks() -> Vec<(u32, u32, u8)> {
    let c = seal(0, 0) as u32;
    let col = |st: u32, f: u32| seal(st, f) as u32 ^ c;
    (0..32)
        .map(|o| {
            let s = (0..32).fold(0u32, |m, i| m | (col(1 << i, 0) >> o & 1) << i);
            let f = (0..32).fold(0u32, |m, i| m | (col(0, 1 << i) >> o & 1) << i);
            (s, f, (c >> o & 1) as u8)
        })
        .collect()
}

/// The data-word CRC step as an XOR network: inputs `0..32` the state,
/// `32..96` the word (what the RTL computes, `crc_nx`).
pub fn crc_word_net() -> XorNet {
    let rows: Vec<Vec<usize>> = crc_word_masks()
        .iter()
        .map(|&(s, d)| {
            let st = (0..32).filter(move |i| s >> i & 1 == 1);
            st.chain((0..64).filter(move |i| d >> i & 1 == 1).map(|i| 32 + i))
                .collect()
        })
        .collect();
    XorNet::build(&rows)
}

/// [`crc_word_net`] evaluated on `(state, word)`.
pub fn crc_word_by_net(net: &XorNet, state: u32, word: u64) -> u32 {
    let x: Vec<bool> = (0..32)
        .map(|i| state >> i & 1 == 1)
        .chain((0..64).map(|i| word >> i & 1 == 1))
        .collect();
    net.eval(&x)
        .iter()
        .enumerate()
        .fold(0, |acc, (o, &b)| acc | (b as u32) << o)
}

/// The masks applied to `(state, word)`: what the RTL computes.
pub fn crc_word_by_masks(state: u32, word: u64) -> u32 {
    crc_word_masks()
        .iter()
        .enumerate()
        .fold(0, |acc, (o, &(s, d))| {
            let bit = ((state & s).count_ones() + (word & d).count_ones()) & 1;
            acc | bit << o
        })
}

/// The seal masks applied to `(state, fields)`: the CRC field the RTL computes.
pub fn seal_by_masks(state: u32, fields: u32) -> u32 {
    seal_masks()
        .iter()
        .enumerate()
        .fold(0, |acc, (o, &(s, f, c))| {
            let bit = ((state & s).count_ones() + (fields & f).count_ones() + c as u32) & 1;
            acc | bit << o
        })
}

/// The RTL's limits beyond `LinkParams::validate`, naming key and value.
pub fn check_rtl_params(p: &LinkParams) -> Result<()> {
    p.validate()?;
    if p.tx_buffer_flits > MAX_TX_BUFFER_FLITS {
        bail!(
            "link.tx_buffer_flits = {}: the link_tx RTL supports 1..={MAX_TX_BUFFER_FLITS}",
            p.tx_buffer_flits
        );
    }
    RetryBufferParams {
        words: p.retry_words,
    }
    .validate()
    .with_context(|| {
        format!(
            "link.retry_words = {}: the link_tx RTL's retry buffer",
            p.retry_words
        )
    })?;
    Ok(())
}

/// The statement selecting word `cur_k` of a flit being sent from
/// `cur_data` (words 1..`wpf`, word 0 left when the flit was taken): while
/// `cur_valid`, `cur_k` is in 1..`wpf`, so word 1 is the default and no
/// mux is spent on an index that never occurs.
fn cur_word(wpf: usize) -> String {
    if wpf == 1 {
        // No flit has a second word; the branch reading it is never taken.
        return "dword = 64'd0;".to_string();
    }
    let mut s = "dword = cur_data[63:0];".to_string();
    for k in 2..wpf {
        s.push_str(&format!(
            " if (cur_k == 2'd{k}) dword = cur_data[{}:{}];",
            (k - 1) * 64 + 63,
            (k - 1) * 64
        ));
    }
    s
}

fn body(p: &LinkParams) -> Result<Body> {
    check_rtl_params(p)?;
    let wpf = p.words_per_flit();
    let qa = bits_for(p.tx_buffer_flits - 1);
    let qc = bits_for(p.tx_buffer_flits);
    let vb = if p.vcs > 1 { bits_for(p.vcs - 1) } else { 0 };
    let addr = |vc: &str, ptr: &str| {
        if vb == 0 {
            ptr.to_string()
        } else {
            format!("{{{vc}[{}:0], {ptr}}}", vb - 1)
        }
    };
    let seq = SEQ_BITS as usize;
    let ctl = |nack: bool, ack: u8, a: (u8, u8), b: (u8, u8)| {
        Control {
            nack,
            ack_seq: ack,
            credits: [a, b],
        }
        .pack()
    };
    let c_nack = field("control.nack", 1, |x| ctl(x != 0, 0, (0, 0), (0, 0)))?;
    let c_ack = field("control.ack_seq", SEQ_BITS, |x| {
        ctl(false, x as u8, (0, 0), (0, 0))
    })?;
    let c_vca = field("control.vc_a", 3, |x| ctl(false, 0, (x as u8, 0), (0, 0)))?;
    let c_fra = field("control.freed_a", 8, |x| {
        ctl(false, 0, (0, x as u8), (0, 0))
    })?;
    let c_vcb = field("control.vc_b", 3, |x| ctl(false, 0, (0, 0), (x as u8, 0)))?;
    let c_frb = field("control.freed_b", 8, |x| {
        ctl(false, 0, (0, 0), (0, x as u8))
    })?;
    let c_base = ctl(false, 0, (0, 0), (0, 0));
    let used = [c_nack, c_ack, c_vca, c_fra, c_vcb, c_frb]
        .iter()
        .fold(0u32, |m, &(lo, hi)| {
            m | (((1u64 << (hi + 1)) - (1u64 << lo)) as u32)
        });
    // A decoded control word: kind and reserved bits as `Control::pack` sets them.
    for f in [c_base, !used & c_base | used] {
        if Control::unpack(f).is_none() {
            bail!("golden control layout: {f:#x} does not unpack");
        }
    }
    let tr = |seq: u8, vc: u8, head: bool, tails: [u8; TAIL_SLOTS]| {
        Trailer {
            seq,
            vc,
            head,
            tails,
        }
        .pack()
    };
    let t_seq = field("trailer.seq", SEQ_BITS, |x| tr(x as u8, 0, false, [0; 3]))?;
    let t_vc = field("trailer.vc", 3, |x| tr(0, x as u8, false, [0; 3]))?;
    let t_head = field("trailer.head", 1, |x| tr(0, 0, x != 0, [0; 3]))?;
    let t_ta = field("trailer.tail_a", SEQ_BITS, |x| {
        tr(0, 0, false, [x as u8, 0, 0])
    })?;
    let t_tb = field("trailer.tail_b", SEQ_BITS, |x| {
        tr(0, 0, false, [0, x as u8, 0])
    })?;
    let t_tc = field("trailer.tail_c", SEQ_BITS, |x| {
        tr(0, 0, false, [0, 0, x as u8])
    })?;
    if TAIL_SLOTS != 3 {
        bail!("the link_tx template packs 3 tail slots, the golden model has {TAIL_SLOTS}");
    }
    let tails_none = (0..TAIL_SLOTS).fold(0u64, |m, k| m | (TAIL_NONE as u64) << (seq * k));
    let since_max = p.ack_interval.max(p.refresh_interval).max(p.keepalive);
    let sw = bits_for(since_max);
    let tw = bits_for(p.timeout);
    let batch_cmp = if p.credit_batch <= 255 {
        format!("(most >= 8'd{})", p.credit_batch)
    } else {
        "1'b0".to_string()
    };
    let w = p.flit_bits;
    let (crc_wires, crc_outs) = crc_word_net().verilog("crc_k", |i| {
        if i < 32 {
            format!("crc_s[{i}]")
        } else {
            format!("retry$push_data[{}]", i - 32)
        }
    });
    Ok(Body {
        flit_bits: w,
        flit_m1: w - 1,
        vcs: p.vcs,
        vcs_m1: p.vcs - 1,
        keys_bits: 11 * p.vcs,
        keys_m1: 11 * p.vcs - 1,
        wpf,
        multi_word: if wpf > 1 { "1'b1" } else { "1'b0" },
        rest_bits: w.saturating_sub(64).max(64),
        rest_m1: w.saturating_sub(64).max(64) - 1,
        cur_word: cur_word(wpf),
        crc_wires,
        crc_outs,
        seal_rows: seal_masks()
            .iter()
            .map(|&(s, f, c)| (format!("{s:08x}"), format!("{f:08x}"), c))
            .collect(),
        crc_init: format!("{FRAME_CRC_INIT:08x}"),
        qw: w + 2,
        qw_m1: w + 1,
        qw_m2: w,
        qdepth_all_m1: (p.vcs << qa) - 1,
        qa,
        qa_m1: qa - 1,
        qc,
        vcs_qa: p.vcs * qa,
        vcs_qa_m1: p.vcs * qa - 1,
        vcs_qc: p.vcs * qc,
        vcs_qc_m1: p.vcs * qc - 1,
        vcs8: 8 * p.vcs,
        vcs8_m1: 8 * p.vcs - 1,
        qaddr_bits: vb + qa,
        qaddr_m1: vb + qa - 1,
        enq_addr_expr: addr("in_vc", "wptr"),
        front_addr_expr: addr("tvc", "fptr"),
        txb: p.tx_buffer_flits,
        txb_m1: p.tx_buffer_flits - 1,
        rxb: p.rx_buffer_flits,
        seq,
        seq_m1: seq - 1,
        seq_max: SEQ_MOD as usize - 1,
        tails_w: seq * TAIL_SLOTS,
        tails_m1: seq * TAIL_SLOTS - 1,
        tails_a_lo: seq * (TAIL_SLOTS - 1),
        tails_a_lo_m1: seq * (TAIL_SLOTS - 1) - 1,
        tails_none: format!("{tails_none:x}"),
        tail_slots: TAIL_SLOTS,
        tail_slots_m1: TAIL_SLOTS - 1,
        frame_flits: p.frame_flits,
        tw,
        tw_m1: tw - 1,
        timeout: p.timeout,
        sw,
        sw_m1: sw - 1,
        since_max,
        ack_interval: p.ack_interval,
        refresh: p.refresh_interval,
        keepalive: p.keepalive,
        batch_cmp,
        max_outstanding: MAX_OUTSTANDING as usize,
        used_bits: USED_BITS,
        room_limit: p.retry_words - wpf,
        st_down: LinkState::Down as u8,
        st_train: LinkState::Training as u8,
        st_up: LinkState::Up as u8,
        train_ok: format!("{:016x}", seal(FRAME_CRC_INIT, training_fields(true))),
        train_no: format!("{:016x}", seal(FRAME_CRC_INIT, training_fields(false))),
        c_base: format!("{c_base:08x}"),
        c_rsv_mask: format!("{:08x}", !used),
        c_nack: c_nack.0,
        c_ack: c_ack.0,
        c_ack_hi: c_ack.1,
        c_vca: c_vca.0,
        c_vca_hi: c_vca.1,
        c_fra: c_fra.0,
        c_fra_hi: c_fra.1,
        c_vcb: c_vcb.0,
        c_vcb_hi: c_vcb.1,
        c_frb: c_frb.0,
        c_frb_hi: c_frb.1,
        t_base: format!("{:08x}", tr(0, 0, false, [0; 3])),
        t_seq: t_seq.0,
        t_seq_hi: t_seq.1,
        t_vc: t_vc.0,
        t_vc_hi: t_vc.1,
        t_head: t_head.0,
        t_ta: t_ta.0,
        t_ta_hi: t_ta.1,
        t_tb: t_tb.0,
        t_tb_hi: t_tb.1,
        t_tc: t_tc.0,
        t_tc_hi: t_tc.1,
    })
}

/// The block: ports as in the module doc, body generated Verilog.
#[derive(LogicBlock)]
pub struct LinkTxRtl<const W: usize, const F: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// A flit from the router.
    pub in_valid: Signal<In, bool>,
    /// Its data.
    pub in_data: Signal<In, Bits<W>>,
    /// Head flag.
    pub in_head: Signal<In, bool>,
    /// Tail flag.
    pub in_tail: Signal<In, bool>,
    /// Its VC.
    pub in_vc: Signal<In, Bits<4>>,
    /// A credit to the router.
    pub credit_out_valid: Signal<Out, bool>,
    /// Its VC.
    pub credit_out_vc: Signal<Out, Bits<4>>,
    /// A word to the PHY.
    pub phy_tx_valid: Signal<Out, bool>,
    /// Its data.
    pub phy_tx_data: Signal<Out, Bits<64>>,
    /// Control flag.
    pub phy_tx_ctrl: Signal<Out, bool>,
    /// The PHY takes the word.
    pub phy_tx_ready: Signal<In, bool>,
    /// Link state from `link_rx`.
    pub st_state: Signal<In, Bits<2>>,
    /// `link_rx` heard the far end.
    pub st_heard: Signal<In, bool>,
    /// A far-end control word was decoded.
    pub st_peer_valid: Signal<In, bool>,
    /// Its 32 field bits.
    pub st_peer_fields: Signal<In, Bits<32>>,
    /// Last frame received in order.
    pub st_ack_seq: Signal<In, Bits<6>>,
    /// Nack requests.
    pub st_nack_count: Signal<In, Bits<8>>,
    /// Urgent control-word requests.
    pub st_urgent: Signal<In, Bits<8>>,
    /// Flits freed per VC, 8 bits each.
    pub st_freed: Signal<In, Bits<F>>,
    /// Counter.
    pub cnt_frames_sent: Signal<Out, Bits<32>>,
    /// Counter.
    pub cnt_retransmissions: Signal<Out, Bits<32>>,
    /// Counter.
    pub cnt_timeouts: Signal<Out, Bits<32>>,
    /// Counter.
    pub cnt_bad_acks: Signal<Out, Bits<32>>,
    /// Counter.
    pub cnt_overflows: Signal<Out, Bits<32>>,
    /// Counter.
    pub cnt_words_replayed: Signal<Out, Bits<32>>,
    /// Counter.
    pub cnt_ctrl_sent: Signal<Out, Bits<32>>,
    retry: RetryBufferRtl,
    _body: String,
}

impl<const W: usize, const F: usize> Logic for LinkTxRtl<W, F> {
    // Simulated with Verilator only (the golden model is the behaviour).
    fn update(&mut self) {}

    fn connect(&mut self) {
        self.credit_out_valid.connect();
        self.credit_out_vc.connect();
        self.phy_tx_valid.connect();
        self.phy_tx_data.connect();
        self.phy_tx_ctrl.connect();
        self.cnt_frames_sent.connect();
        self.cnt_retransmissions.connect();
        self.cnt_timeouts.connect();
        self.cnt_bad_acks.connect();
        self.cnt_overflows.connect();
        self.cnt_words_replayed.connect();
        self.cnt_ctrl_sent.connect();
        let r = &mut self.retry;
        r.clock.connect();
        r.reset.connect();
        r.ack_valid.connect();
        r.ack_seq.connect();
        r.stop.connect();
        r.start.connect();
        r.take.connect();
        r.push_valid.connect();
        r.push_data.connect();
        r.push_ctrl.connect();
        r.close_valid.connect();
        r.close_seq.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(self._body.clone())
    }
}

/// Top module name of a parameter point: the main sizes and a hash of
/// every parameter.
pub fn link_tx_top_name(p: &LinkParams) -> String {
    let text = exanet_sim::point::to_text(p);
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    format!(
        "exanet_link_tx_f{}_v{}_n{}_{:08x}",
        p.flit_bits, p.vcs, p.frame_flits, h as u32
    )
}

fn build<const W: usize, const F: usize>(p: &LinkParams, text: String) -> Result<Emitted> {
    let mut uut = LinkTxRtl::<W, F> {
        clock: Default::default(),
        reset: Default::default(),
        in_valid: Default::default(),
        in_data: Default::default(),
        in_head: Default::default(),
        in_tail: Default::default(),
        in_vc: Default::default(),
        credit_out_valid: Default::default(),
        credit_out_vc: Default::default(),
        phy_tx_valid: Default::default(),
        phy_tx_data: Default::default(),
        phy_tx_ctrl: Default::default(),
        phy_tx_ready: Default::default(),
        st_state: Default::default(),
        st_heard: Default::default(),
        st_peer_valid: Default::default(),
        st_peer_fields: Default::default(),
        st_ack_seq: Default::default(),
        st_nack_count: Default::default(),
        st_urgent: Default::default(),
        st_freed: Default::default(),
        cnt_frames_sent: Default::default(),
        cnt_retransmissions: Default::default(),
        cnt_timeouts: Default::default(),
        cnt_bad_acks: Default::default(),
        cnt_overflows: Default::default(),
        cnt_words_replayed: Default::default(),
        cnt_ctrl_sent: Default::default(),
        retry: RetryBufferRtl::new(&RetryBufferParams {
            words: p.retry_words,
        })?,
        _body: text,
    };
    emit(&mut uut, &link_tx_top_name(p))
}

/// Validate `p` and emit its `link_tx` as Verilog.
pub fn emit_link_tx(p: &LinkParams) -> Result<Emitted> {
    let text = body(p)?
        .render()
        .context("rendering the template templates/link/link_tx.v")?;
    macro_rules! by_vcs {
        ($w:literal) => {
            match p.vcs {
                1 => build::<$w, 8>(p, text),
                2 => build::<$w, 16>(p, text),
                3 => build::<$w, 24>(p, text),
                4 => build::<$w, 32>(p, text),
                5 => build::<$w, 40>(p, text),
                6 => build::<$w, 48>(p, text),
                7 => build::<$w, 56>(p, text),
                _ => build::<$w, 64>(p, text),
            }
        };
    }
    match p.flit_bits {
        64 => by_vcs!(64),
        128 => by_vcs!(128),
        _ => by_vcs!(256),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;
    use exanet_sim::rng::Rng;

    /// The XOR masks compute the golden `crc_word` and `seal` exactly.
    #[test]
    fn crc_masks_match_the_golden_crc() {
        let mut rng = Rng::new(14);
        let net = crc_word_net();
        for _ in 0..2000 {
            let (s, d, f) = (rng.next_u64() as u32, rng.next_u64(), rng.next_u64() as u32);
            assert_eq!(crc_word_by_masks(s, d), crc_word(s, d), "{s:x} {d:x}");
            assert_eq!(crc_word_by_net(&net, s, d), crc_word(s, d), "{s:x} {d:x}");
            assert_eq!(seal_by_masks(s, f), seal(s, f) as u32, "{s:x} {f:x}");
        }
        assert_eq!(
            seal_by_masks(FRAME_CRC_INIT, 0x8000_0000),
            seal(FRAME_CRC_INIT, 0x8000_0000) as u32
        );
    }

    #[test]
    fn emits_lint_clean_verilog() {
        for (fb, v, lat) in [(128, 4, 16), (64, 1, 1), (256, 8, 4), (128, 3, 2)] {
            let p = LinkParams::sized(fb, v, lat, 32);
            let e = emit_link_tx(&p).unwrap();
            assert_eq!(e.top, link_tx_top_name(&p));
            let t = e.text();
            assert!(!t.contains('$') && !t.contains("{{"));
            assert_lint_clean(&e);
        }
    }

    #[test]
    fn bad_params_name_the_key() {
        let p = LinkParams {
            tx_buffer_flits: 5000,
            ..Default::default()
        };
        let e = emit_link_tx(&p).unwrap_err().to_string();
        assert!(e.contains("link.tx_buffer_flits = 5000"), "{e}");
        let p = LinkParams {
            retry_words: 8192,
            ..Default::default()
        };
        let e = format!("{:#}", emit_link_tx(&p).unwrap_err());
        assert!(e.contains("link.retry_words = 8192"), "{e}");
        let p = LinkParams {
            vcs: 9,
            ..Default::default()
        };
        let e = emit_link_tx(&p).unwrap_err().to_string();
        assert!(e.contains("link.vcs = 9"), "{e}");
    }
}
