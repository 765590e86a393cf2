//! The NI RTL's parameters and the sizes derived from them: what every
//! sub-block generator (and the top) reads, in one place of its own so the
//! sub-blocks do not depend on the top that assembles them.

use anyhow::{bail, Result};
use exanet_sim::ni::NiParams;

/// Parameters of the NI RTL. Their serde form is the parameter point of
/// `exanet cosim ni` and of the `ni` top in `OUT/manifest.json` (through
/// [`exanet_sim::point`]: the golden model's keys, then the RTL's).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NiRtlParams {
    /// The golden model's parameters (validated by it).
    pub ni: NiParams,
    /// Credits of the router input VC the NI sends on (its buffer size).
    pub buffer_flits: usize,
    /// VC the class-0 packets (requests and data) are sent on: a VC of
    /// class 0, `< vcs_per_class`.
    pub vc: usize,
    /// VC the class-1 packets (control responses: RdmaCompletion, Nack,
    /// MailboxAck, MailboxNack) are sent on: a VC of class 1, in
    /// `vcs_per_class..2 * vcs_per_class`.
    pub resp_vc: usize,
    /// VCs per message class on the router's local port (the router's
    /// `vcs_per_class`; its `classes` must be 2): a flit arriving on VC `v`
    /// belongs to class `v / vcs_per_class`.
    pub vcs_per_class: usize,
    /// Transmit read-ahead: packets the scheduler may have picked and not
    /// yet sent (config key `ni.tx_ahead`; a power of two in
    /// [`super::rdma_tx::TX_AHEAD_RANGE`]). RTL only: the golden model does
    /// not depend on it.
    pub tx_ahead: usize,
}

impl Default for NiRtlParams {
    fn default() -> Self {
        NiRtlParams {
            ni: NiParams::default(),
            buffer_flits: 32,
            vc: 0,
            resp_vc: 2,
            vcs_per_class: 2,
            tx_ahead: super::rdma_tx::DEFAULT_TX_AHEAD,
        }
    }
}

/// The point text of `self`.
impl NiRtlParams {
    /// The point text (`key=value,...`).
    pub fn point_text(&self) -> String {
        exanet_sim::point::to_text(self)
    }

    /// Parse point text (keys not given keep the defaults).
    pub fn parse_point(text: &str) -> Result<NiRtlParams> {
        exanet_sim::point::parse(text)
    }
}

/// NI datapath width: the only `flit_bits` the NI RTL supports.
pub const NI_FLIT_BITS: u32 = 128;
/// NI memory address width on the ZU9EG (40-bit physical addresses).
pub const NI_ADDR_BITS: u32 = 40;
/// Default packetizer message size (one Cortex-A53 cache line).
pub const NI_MSG_BYTES: u32 = 64;

/// The `[ni]` keys of a config: the NI RTL options no other key implies
/// (its sizes follow `[packet]` and `[router]`, see [`NiRtlParams::derive`]).
/// A new NI key is a field here, its field in [`NiRtlParams`] (set in
/// [`NiRtlParams::derive`]), its row in the hardware-limits table when the
/// RTL bounds it, and its line in the default config.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NiKeys {
    /// Transmit read-ahead: packets the NI's scheduler may pick (and start
    /// reading from memory) before they are sent; a power of two, 2..=32.
    pub tx_ahead: u32,
    /// VC of the NI's control responses, a class-1 VC; 0 = the first,
    /// `vcs_per_class`.
    pub resp_vc: u32,
    /// Communicator slots of the NI's allreduce engine, 0..=16; 0 = no
    /// engine (the NI refuses allreduce descriptors as a bad op).
    #[serde(default)]
    pub ar_communicators: u32,
    /// Allreduce descriptors queued behind the running collective, with
    /// the completions waiting for completion-queue room, 1..=64.
    #[serde(default = "default_ar_queue_depth")]
    pub ar_queue_depth: u32,
    /// Entries of the NI's event trace ring: 0 (no trace hardware) or a
    /// power of two in 8..=4096 (`exanet_sim::ni::trace`).
    #[serde(default = "default_trace_depth")]
    pub trace_depth: u32,
}

/// `ni.trace_depth` when a config leaves it out: the golden model's
/// default.
fn default_trace_depth() -> u32 {
    NiParams::default().trace_depth as u32
}

/// `ni.ar_queue_depth` when a config leaves it out: the golden model's
/// default.
fn default_ar_queue_depth() -> u32 {
    NiParams::default().ar_queue_depth as u32
}

impl NiRtlParams {
    /// The NI for `flit_bits`-bit flits and payloads of at most
    /// `max_payload_bytes`, sending into router VCs of `buffer_flits` with
    /// `vcs_per_class` VCs per class, with the `[ni]` keys `ni` (checked
    /// already), or why there is none. Its sizes are derived from the
    /// existing keys, its internal sizes are the golden model's defaults
    /// (`exanet_sim::ni::NiParams`), and `[ni]` holds the RTL options no other
    /// key implies:
    ///
    /// | NI parameter | from |
    /// |---|---|
    /// | (128-bit flits) | `packet.flit_bits` must be 128, the NI's datapath; otherwise no NI is generated |
    /// | `max_payload_bytes` | the largest of 16, 32, 64, 128, 256 that is <= `packet.max_payload_bytes` (below 16: no NI) |
    /// | `mailbox_msg_bytes` | 64 (one Cortex-A53 cache line), or `max_payload_bytes` when smaller |
    /// | `buffer_flits` | `router.buffer_flits`: the NI sends into the router's local input VC, whose buffer that is |
    /// | `vc` | 0: class 0 (requests and data), its first VC |
    /// | `resp_vc` | `ni.resp_vc`, 0 meaning `router.vcs_per_class`: the class-1 VC of the control responses |
    /// | `vcs_per_class` | `router.vcs_per_class` (the NI needs `router.classes = 2`: a config with an NI and one class is refused) |
    /// | `addr_bits` | 40: the ZU9EG's physical address width |
    /// | `channels`, queue depths, `windows`, … | the golden model's defaults |
    /// | `tx_ahead` | `ni.tx_ahead` (RTL only: transmit read-ahead in packets) |
    /// | `ar_communicators`, `ar_queue_depth` | `ni.ar_communicators` (0: no allreduce engine), `ni.ar_queue_depth` |
    /// | `trace_depth` | `ni.trace_depth` (0: no event trace) |
    ///
    /// One NI module serves every local port (`topology.local_ports`); its
    /// coordinates are an input.
    pub fn derive(
        ni: &NiKeys,
        flit_bits: u32,
        max_payload_bytes: u32,
        buffer_flits: usize,
        vcs_per_class: usize,
    ) -> Result<NiRtlParams, String> {
        if flit_bits != NI_FLIT_BITS {
            return Err(format!(
                "ni: not generated: packet.flit_bits = {} but the NI's datapath is {NI_FLIT_BITS}-bit",
                flit_bits
            ));
        }
        let payload = exanet_sim::ni::params::MAX_PAYLOAD_CHOICES
            .iter()
            .copied()
            .filter(|&c| c <= max_payload_bytes as usize)
            .max()
            .ok_or_else(|| {
                format!(
                    "ni: not generated: packet.max_payload_bytes = {} is below the NI's smallest \
                 packet payload (16)",
                    max_payload_bytes
                )
            })?;
        let params = NiParams {
            max_payload_bytes: payload,
            mailbox_msg_bytes: (NI_MSG_BYTES as usize).min(payload),
            addr_bits: NI_ADDR_BITS,
            ar_communicators: ni.ar_communicators as usize,
            ar_queue_depth: ni.ar_queue_depth as usize,
            trace_depth: ni.trace_depth as usize,
            ..NiParams::default()
        };
        params
            .validate()
            .map_err(|e| format!("ni: not generated: {e:#}"))?;
        Ok(NiRtlParams {
            ni: params,
            buffer_flits,
            vc: 0,
            // 0 = the first class-1 VC.
            resp_vc: match ni.resp_vc {
                0 => vcs_per_class,
                v => v as usize,
            },
            vcs_per_class,
            tx_ahead: ni.tx_ahead as usize,
        })
    }
}

/// `ceil(log2(n))`, at least 1 ([`exanet_sim::bits::index_bits`]).
pub fn clog2(n: usize) -> usize {
    exanet_sim::bits::index_bits(n) as usize
}

/// Widths and sizes derived from the parameters (the templates' numbers:
/// [`Geometry::keys`]).
#[derive(Clone, Debug)]
pub struct Geometry {
    /// Parameters.
    pub p: NiRtlParams,
    /// Channels.
    pub c: usize,
    /// Channel index bits.
    pub cw: usize,
    /// Descriptor queue address bits (storage `2^dqa` per channel).
    pub dqa: usize,
    /// Message slots per channel.
    pub s: usize,
    /// Slot index bits.
    pub sa: usize,
    /// 32-bit words of a message window.
    pub mw: usize,
    /// Word index bits.
    pub mwa: usize,
    /// Windows.
    pub win: usize,
    /// Window index bits.
    pub wa: usize,
    /// Credit counter bits.
    pub crw: usize,
    /// log2(max payload).
    pub pa: usize,
    /// Receive ring index bits (`2^rxa` = [`rx_buffer_flits`] words).
    pub rxa: usize,
    /// Error queue index bits (storage `2^eqa` entries).
    pub eqa: usize,
    /// Mailbox index bits (storage `2^mba` messages).
    pub mba: usize,
    /// 128-bit words of a mailbox message (`mailbox_msg_bytes / 16`).
    pub mb16: usize,
    /// Word index bits within a message (storage `2^mbwa` words).
    pub mbwa: usize,
    /// Completion queue index bits.
    pub cqa: usize,
    /// Response queue index bits.
    pub rqa: usize,
    /// Read queue index bits.
    pub rda: usize,
    /// The allreduce engine is in (`ni.ar_communicators > 0`).
    pub ar: bool,
}

/// Flits of the largest packet the NI receives (`2 + P/16`): a sender
/// starts a packet only when it holds this many receive credits (virtual
/// cut-through).
pub fn rx_packet_flits(max_payload_bytes: usize) -> usize {
    2 + max_payload_bytes / 16
}

/// Flits of the receive buffer: the credits a sender starts with. At least
/// two maximum packets, so that one arrives while the previous one is
/// checked and written to memory, rounded up to a power of two (the ring's
/// size; the rounding costs no extra distributed RAM).
pub fn rx_buffer_flits(max_payload_bytes: usize) -> usize {
    (2 * rx_packet_flits(max_payload_bytes)).next_power_of_two()
}

/// Flits of the class-1 receive ring (control responses are two flits,
/// but a sender may put any packet on a class-1 VC, so the ring holds a
/// largest packet): [`rx_packet_flits`] rounded up to a power of two.
pub fn rx_class1_flits(max_payload_bytes: usize) -> usize {
    rx_packet_flits(max_payload_bytes).next_power_of_two()
}

/// Register-file size limits of the phase-1 RTL (message slot bytes are
/// registers: `channels · pkt_slots · mailbox_msg_bytes` bytes).
pub const MAX_SLOT_BYTES: usize = 64 * 1024;

/// The derived numbers the NI templates use (`{{ k.name }}`): sizes,
/// index widths and their `- 1` / `+ 1` forms (`m1` / `w`), named as in
/// the Verilog they size.
#[derive(Clone, Debug)]
pub struct Keys {
    pub c: usize,
    pub cw: usize,
    pub cwm1: usize,
    pub nc: usize,
    pub ncm1: usize,
    pub dqa: usize,
    pub dqam1: usize,
    pub dqd: usize,
    pub dqw: usize,
    pub dqwm1: usize,
    pub s: usize,
    pub sa: usize,
    pub sam1: usize,
    pub sw: usize,
    pub swm1: usize,
    pub mw: usize,
    pub mwa: usize,
    pub mwam1: usize,
    pub mb: usize,
    pub win: usize,
    pub wa: usize,
    pub wam1: usize,
    pub ab: usize,
    pub abm1: usize,
    pub p: usize,
    pub pa: usize,
    pub pam1: usize,
    pub buf: usize,
    pub crw: usize,
    pub crwm1: usize,
    pub vc: usize,
    pub rvc: usize,
    pub vpc: usize,
    pub mba: usize,
    pub mbam1: usize,
    pub mbd: usize,
    pub mbdm1: usize,
    pub mb16: usize,
    pub mb16m1: usize,
    pub mbwa: usize,
    pub mbwam1: usize,
    pub cqa: usize,
    pub cqam1: usize,
    pub cqd: usize,
    pub cqdm1: usize,
    pub rqa: usize,
    pub rqam1: usize,
    pub rqd: usize,
    pub rqdm1: usize,
    pub rda: usize,
    pub rdam1: usize,
    pub rdw: usize,
    pub rdd: usize,
    pub rddm1: usize,
    pub rdnm1: usize,
    pub pd: usize,
    pub pdm1: usize,
    /// The allreduce engine's registers, descriptor check and completions
    /// are generated.
    pub ar: bool,
    /// The event trace is generated (`ni.trace_depth > 0`).
    pub tr: bool,
}

impl Geometry {
    /// Derive, rejecting what the RTL does not support (naming key and rule).
    /// With `ni.ar_communicators > 0` the allreduce engine is generated
    /// (see `super::allreduce`); it takes `max_payload_bytes` of 16..=256,
    /// a multiple of 16 (its chunk buffers), which the NI's payload choices
    /// all are.
    pub fn new(p: &NiRtlParams) -> Result<Geometry> {
        p.ni.validate()?;
        let n = &p.ni;
        if !(2..=1024).contains(&p.buffer_flits) {
            bail!(
                "ni.buffer_flits = {}: must be in 2..=1024 (credits of the router's local input VC; a response needs 2)",
                p.buffer_flits
            );
        }
        if !(1..=8).contains(&p.vcs_per_class) {
            bail!(
                "ni.vcs_per_class = {}: must be in 1..=8 (two classes on a 4-bit VC field)",
                p.vcs_per_class
            );
        }
        if p.vc >= p.vcs_per_class {
            bail!(
                "ni.vc = {}: must be a class-0 VC, below vcs_per_class = {}",
                p.vc,
                p.vcs_per_class
            );
        }
        if !(p.vcs_per_class..2 * p.vcs_per_class).contains(&p.resp_vc) {
            bail!(
                "ni.resp_vc = {}: must be a class-1 VC, in {}..={} (vcs_per_class = {})",
                p.resp_vc,
                p.vcs_per_class,
                2 * p.vcs_per_class - 1,
                p.vcs_per_class
            );
        }
        let ahead = super::rdma_tx::TX_AHEAD_RANGE;
        if !ahead.contains(&p.tx_ahead) || !p.tx_ahead.is_power_of_two() {
            bail!(
                "ni.tx_ahead = {}: must be a power of two in {}..={} (packets the transmit scheduler may pick ahead of sending)",
                p.tx_ahead,
                ahead.start(),
                ahead.end()
            );
        }
        if n.ar_communicators != 0
            && !((16..=256).contains(&n.max_payload_bytes)
                && n.max_payload_bytes.is_multiple_of(16))
        {
            bail!(
                "ni.ar_communicators = {}: the allreduce engine needs ni.max_payload_bytes in 16..=256, a multiple of 16 (its chunk buffers hold one fragment), not {}",
                n.ar_communicators,
                n.max_payload_bytes
            );
        }
        let slot_bytes = n.channels * n.pkt_slots * n.mailbox_msg_bytes;
        if slot_bytes > MAX_SLOT_BYTES {
            bail!(
                "ni.channels * ni.pkt_slots * ni.mailbox_msg_bytes = {slot_bytes}: must be <= {MAX_SLOT_BYTES} (message slots are registers in this RTL)"
            );
        }
        Ok(Geometry {
            c: n.channels,
            cw: clog2(n.channels),
            dqa: clog2(n.desc_queue_depth),
            s: n.pkt_slots,
            sa: clog2(n.pkt_slots),
            mw: n.mailbox_msg_bytes / 4,
            mwa: clog2(n.mailbox_msg_bytes / 4),
            win: n.windows,
            wa: clog2(n.windows),
            crw: clog2(p.buffer_flits + 1).max(2),
            pa: n.max_payload_bytes.trailing_zeros() as usize,
            rxa: clog2(rx_buffer_flits(n.max_payload_bytes)),
            eqa: clog2(n.errq_depth),
            mba: clog2(n.mailbox_depth),
            mb16: n.mailbox_msg_bytes / 16,
            mbwa: clog2(n.mailbox_msg_bytes / 16),
            cqa: clog2(n.cq_depth),
            rqa: clog2(n.resp_queue_depth),
            rda: clog2(n.read_queue_depth),
            ar: n.ar_communicators > 0,
            p: p.clone(),
        })
    }

    /// The numbers the templates use.
    pub fn keys(&self) -> Keys {
        let n = &self.p.ni;
        Keys {
            c: self.c,
            cw: self.cw,
            cwm1: self.cw - 1,
            nc: 1 << self.cw,
            ncm1: (1 << self.cw) - 1,
            dqa: self.dqa,
            dqam1: self.dqa - 1,
            dqd: n.desc_queue_depth,
            dqw: self.dqa + 1,
            dqwm1: self.dqa,
            s: self.s,
            sa: self.sa,
            sam1: self.sa - 1,
            sw: (self.sa + 1),
            swm1: self.sa,
            mw: self.mw,
            mwa: self.mwa,
            mwam1: self.mwa - 1,
            mb: n.mailbox_msg_bytes,
            win: self.win,
            wa: self.wa,
            wam1: self.wa - 1,
            ab: n.addr_bits as usize,
            abm1: n.addr_bits as usize - 1,
            p: n.max_payload_bytes,
            pa: self.pa,
            pam1: self.pa - 1,
            buf: self.p.buffer_flits,
            crw: self.crw,
            crwm1: self.crw - 1,
            vc: self.p.vc,
            rvc: self.p.resp_vc,
            vpc: self.p.vcs_per_class,
            mba: self.mba,
            mbam1: self.mba - 1,
            mbd: n.mailbox_depth,
            mbdm1: n.mailbox_depth - 1,
            mb16: self.mb16,
            mb16m1: self.mb16 - 1,
            mbwa: self.mbwa,
            mbwam1: self.mbwa - 1,
            cqa: self.cqa,
            cqam1: self.cqa - 1,
            cqd: n.cq_depth,
            cqdm1: n.cq_depth - 1,
            rqa: self.rqa,
            rqam1: self.rqa - 1,
            rqd: n.resp_queue_depth,
            rqdm1: n.resp_queue_depth - 1,
            rda: self.rda,
            rdam1: self.rda - 1,
            rdw: (self.rda + 1),
            rdd: n.read_queue_depth,
            rddm1: n.read_queue_depth - 1,
            rdnm1: ((1usize << self.rda) - 1),
            pd: n.poison_depth,
            pdm1: n.poison_depth - 1,
            ar: self.ar,
            tr: n.trace_depth > 0,
        }
    }
}
