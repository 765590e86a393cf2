//! The NI top block: ports, children, parameters, and assembly of the
//! generated body from the sub-block generators (see the `ni` module doc).

use super::codes::Codes;
use super::records::Records;
use crate::common::crc32::Crc32;
use crate::emit::{emit, Emitted};
use crate::packet::footer::{FooterPack, FooterUnpack};
use crate::packet::header::{HeaderPack, HeaderUnpack};
use anyhow::{bail, Result};
use exanet_sim::ni::NiParams;
use rust_hdl::prelude::*;

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
}

impl Geometry {
    /// Derive, rejecting what the RTL does not support (naming key and rule).
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
        }
    }
}

/// Declares the NI top from one list of its ports (each with its doc) and
/// children: the struct, [`Ni::assemble`] (every port default, every child
/// new) and [`Ni::connect_outputs`] (every `Out` port).
macro_rules! ni_block {
    (
        $(#[$sm:meta])*
        ports { $( $(#[$m:meta])* $port:ident : $dir:ident $ty:ty, )* }
        children { $( $child:ident : $cty:ty, )* }
    ) => {
        $(#[$sm])*
        #[derive(LogicBlock)]
        pub struct Ni {
            $( $(#[$m])* pub $port: Signal<$dir, $ty>, )*
            $( $child: $cty, )*
            _body: String,
        }

        impl Ni {
            /// Every port at its default, every child new, and the body.
            fn assemble(body: String) -> Result<Ni> {
                Ok(Ni {
                    $( $port: Default::default(), )*
                    $( $child: <$cty>::new()?, )*
                    _body: body,
                })
            }

            /// Connect every output port (the body drives them).
            fn connect_outputs(&mut self) {
                $( ni_block!(@connect self.$port, $dir); )*
            }
        }
    };
    (@connect $s:expr, In) => {};
    (@connect $s:expr, Out) => {
        $s.connect();
    };
}

ni_block! {
    /// The NI top. See the `ni` module doc for ports and timing.
    ports {
        /// Clock.
        clock: In Clock,
        /// Synchronous reset.
        reset: In bool,
        /// This node's coordinates.
        node: In Bits<22>,
        /// AXI4-Lite AW valid.
        s_awvalid: In bool,
        /// AW ready.
        s_awready: Out bool,
        /// AW address.
        s_awaddr: In Bits<20>,
        /// AWPROT\[0\] (privileged).
        s_awprot: In bool,
        /// W valid.
        s_wvalid: In bool,
        /// W ready.
        s_wready: Out bool,
        /// W data.
        s_wdata: In Bits<32>,
        /// B valid.
        s_bvalid: Out bool,
        /// B ready.
        s_bready: In bool,
        /// B response (0 OKAY, 2 SLVERR).
        s_bresp: Out Bits<2>,
        /// AR valid.
        s_arvalid: In bool,
        /// AR ready.
        s_arready: Out bool,
        /// AR address.
        s_araddr: In Bits<20>,
        /// ARPROT\[0\].
        s_arprot: In bool,
        /// R valid.
        s_rvalid: Out bool,
        /// R ready.
        s_rready: In bool,
        /// R data.
        s_rdata: Out Bits<32>,
        /// R response.
        s_rresp: Out Bits<2>,
        /// AXI4 AR valid.
        m_arvalid: Out bool,
        /// AR ready.
        m_arready: In bool,
        /// AR address.
        m_araddr: Out Bits<42>,
        /// AR burst length - 1.
        m_arlen: Out Bits<8>,
        /// AR size (4: 16 bytes).
        m_arsize: Out Bits<3>,
        /// AR burst (1: INCR).
        m_arburst: Out Bits<2>,
        /// AR user: the PDID.
        m_aruser: Out Bits<16>,
        /// R valid.
        m_rvalid: In bool,
        /// R ready.
        m_rready: Out bool,
        /// R data.
        m_rdata: In Bits<128>,
        /// Flit valid.
        out_valid: Out bool,
        /// Flit data.
        out_data: Out Bits<128>,
        /// Head flit.
        out_head: Out bool,
        /// Tail flit.
        out_tail: Out bool,
        /// Flit VC.
        out_vc: Out Bits<4>,
        /// A credit returns.
        credit_in_valid: In bool,
        /// Its VC.
        credit_in_vc: In Bits<4>,
        /// The scheduler picks a packet this cycle.
        tx_pick: Out bool,
        /// The scheduler cannot pick this cycle (loading a pick, a read of
        /// the last pick not yet issued, the packet queue full, or a
        /// message is next and packets are still queued to send).
        tx_busy: Out bool,
        /// Received flit valid.
        in_valid: In bool,
        /// Received flit data.
        in_data: In Bits<128>,
        /// Received head flit.
        in_head: In bool,
        /// Received tail flit.
        in_tail: In bool,
        /// Received flit VC.
        in_vc: In Bits<4>,
        /// A receive-buffer credit returns to the sender.
        credit_out_valid: Out bool,
        /// Its VC (the packet's).
        credit_out_vc: Out Bits<4>,
        /// AXI4 AW valid.
        m_awvalid: Out bool,
        /// AW ready.
        m_awready: In bool,
        /// AW address (16-byte aligned).
        m_awaddr: Out Bits<42>,
        /// AW burst length - 1.
        m_awlen: Out Bits<8>,
        /// AW size (4: 16 bytes).
        m_awsize: Out Bits<3>,
        /// AW burst (1: INCR).
        m_awburst: Out Bits<2>,
        /// AW user: the packet's PDID.
        m_awuser: Out Bits<16>,
        /// W valid.
        m_wvalid: Out bool,
        /// W ready.
        m_wready: In bool,
        /// W data.
        m_wdata: Out Bits<128>,
        /// W strobes.
        m_wstrb: Out Bits<16>,
        /// W last.
        m_wlast: Out bool,
        /// B valid.
        m_bvalid: In bool,
        /// B ready.
        m_bready: Out bool,
        /// B response (not used yet).
        m_bresp: In Bits<2>,
        /// This cycle the receive path decides a packet.
        rx_commit: Out bool,
        /// This cycle the receive path holds a checked packet it cannot take:
        /// a queue it needs is full (the golden model's `Busy`).
        rx_busy: Out bool,
        /// The message class of the packet decided (`rx_commit`) or found
        /// Busy (`rx_busy`) this cycle: the class of the VC it arrived on.
        rx_class: Out bool,
        /// The response lane takes the head of the response queue this
        /// cycle (the golden model's `emit_response`): its header leaves on
        /// `resp_vc` from the next cycle.
        rsp_pick: Out bool,
    }
    children {
        header_pack: HeaderPack,
        footer_pack: FooterPack,
        crc32: Crc32<128, 5>,
        header_unpack: HeaderUnpack,
        footer_unpack: FooterUnpack,
        crc_rx: Crc32<128, 5>,
        header_rx: HeaderUnpack,
        rsp_hdr: HeaderPack,
        rsp_ftr: FooterPack,
    }
}

impl Ni {
    /// The NI of `p`; errors name the unsupported key.
    pub fn new(p: &NiRtlParams) -> Result<Ni> {
        Ni::assemble(body(&Geometry::new(p)?, false)?)
    }
}

/// The generated body of the NI of `g`: the sub-block templates rendered
/// with the golden model's numbers ([`Codes`], [`Records`]); `marked`
/// renders every golden number as its name instead (the drift test).
pub fn body(g: &Geometry, marked: bool) -> Result<String> {
    let c = Codes::new(g, marked)?;
    let r = Records::new(marked);
    let mut body = String::new();
    body.push_str(&super::axil_regs::verilog(g, &c, &r)?);
    body.push_str(&super::packetizer::verilog(g, &c)?);
    body.push_str(&super::rdma_tx::verilog(g, &c, &r)?);
    body.push_str(&super::axi_master::verilog(g)?);
    body.push_str(&super::rdma_rx::verilog(g, &c, &r)?);
    Ok(body)
}

/// Connect a payload CRC child's inputs (driven by the body).
fn connect_crc(c: &mut Crc32<128, 5>) {
    c.clock.connect();
    c.reset.connect();
    c.start.connect();
    c.valid.connect();
    c.data.connect();
    c.bytes.connect();
}

/// Connect a header encoder's inputs (driven by the body).
fn connect_header_pack(h: &mut HeaderPack) {
    h.fpga_offset.connect();
    h.path.connect();
    h.reserved.connect();
    h.vaddr.connect();
    h.size.connect();
    h.ptype.connect();
    h.dest.connect();
    h.pdid.connect();
    h.vc.connect();
}

/// Connect a footer encoder's inputs (driven by the body).
fn connect_footer_pack(f: &mut FooterPack) {
    for s in [&mut f.notify, &mut f.last, &mut f.first] {
        s.connect();
    }
    f.payload_crc.connect();
    f.user.connect();
    f.ttl.connect();
    f.seq.connect();
    f.flags.connect();
    f.src.connect();
    f.txid.connect();
}

impl Logic for Ni {
    /// Simulated with Verilator only (see the module doc).
    fn update(&mut self) {}

    fn connect(&mut self) {
        self.connect_outputs();
        self.header_unpack.word.connect();
        self.header_rx.word.connect();
        self.footer_unpack.word.connect();
        connect_crc(&mut self.crc_rx);
        connect_crc(&mut self.crc32);
        connect_header_pack(&mut self.header_pack);
        connect_header_pack(&mut self.rsp_hdr);
        connect_footer_pack(&mut self.footer_pack);
        connect_footer_pack(&mut self.rsp_ftr);
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(self._body.clone())
    }
}

/// Top module name of a parameter point, e.g. `exanet_ni_c4_d16_s4_m64_p256_a40_w8_b32_v0r2q2_t8`.
pub fn ni_top_name(p: &NiRtlParams) -> String {
    let n = &p.ni;
    format!(
        "exanet_ni_c{}_d{}_s{}_m{}_p{}_a{}_w{}_b{}_v{}r{}q{}_t{}",
        n.channels,
        n.desc_queue_depth,
        n.pkt_slots,
        n.mailbox_msg_bytes,
        n.max_payload_bytes,
        n.addr_bits,
        n.windows,
        p.buffer_flits,
        p.vc,
        p.resp_vc,
        p.vcs_per_class,
        p.tx_ahead
    )
}

/// Validate `p` and emit its NI as Verilog.
pub fn emit_ni(p: &NiRtlParams) -> Result<Emitted> {
    let mut uut = Ni::new(p)?;
    emit(&mut uut, &ni_top_name(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    fn small() -> NiRtlParams {
        NiRtlParams {
            ni: NiParams {
                channels: 3,
                desc_queue_depth: 3,
                pkt_slots: 2,
                mailbox_msg_bytes: 32,
                max_payload_bytes: 64,
                addr_bits: 32,
                windows: 1,
                mailbox_depth: 3,
                cq_depth: 5,
                resp_queue_depth: 3,
                poison_depth: 3,
                ..Default::default()
            },
            buffer_flits: 6,
            vc: 2,
            // Three VCs per class, responses on the last.
            resp_vc: 5,
            vcs_per_class: 3,
            // The shallowest read-ahead.
            tx_ahead: 2,
        }
    }

    /// The default and a small odd point lint clean, ports as documented;
    /// the read-ahead at its default, smallest and largest.
    #[test]
    fn emits_lint_clean_verilog() {
        let tiny = NiRtlParams {
            ni: NiParams {
                channels: 1,
                desc_queue_depth: 2,
                pkt_slots: 1,
                mailbox_msg_bytes: 16,
                max_payload_bytes: 16,
                addr_bits: 42,
                windows: 1,
                errq_depth: 1,
                mailbox_depth: 1,
                cq_depth: 1,
                resp_queue_depth: 1,
                poison_depth: 1,
                ..Default::default()
            },
            buffer_flits: 3,
            vc: 0,
            resp_vc: 1,
            vcs_per_class: 1,
            // The deepest read-ahead.
            tx_ahead: 32,
        };
        for p in [NiRtlParams::default(), small(), tiny] {
            let e = emit_ni(&p).unwrap();
            assert_eq!(e.top, ni_top_name(&p));
            let top = &e.modules.last().unwrap().1;
            for decl in [
                "[19:0] s_awaddr;",
                "[41:0] m_araddr;",
                "[127:0] m_rdata;",
                "[127:0] out_data;",
                "[15:0] m_aruser;",
                " tx_pick;",
                "[127:0] in_data;",
                "[15:0] m_wstrb;",
                " rx_commit;",
                " rx_busy;",
                " rx_class;",
                " rsp_pick;",
            ] {
                assert!(top.contains(decl), "{} lacks `{decl}`", e.top);
            }
            assert!(!e.text().contains('$'));
            // The packet and read-job queues are `tx_ahead` deep.
            for q in ["mq", "rj"] {
                let decl = format!("reg [{}:0] {q}_count;", p.tx_ahead.trailing_zeros());
                assert!(e.text().contains(&decl), "{} lacks `{decl}`", e.top);
            }
            let mem = format!(" mq_mem [0:{}];", p.tx_ahead - 1);
            assert!(e.text().contains(&mem), "{} lacks `{mem}`", e.top);
            assert_lint_clean(&e);
        }
    }

    #[test]
    fn unsupported_parameters_are_errors_naming_key() {
        let p = NiRtlParams {
            buffer_flits: 0,
            ..Default::default()
        };
        let e = emit_ni(&p).unwrap_err().to_string();
        assert!(e.contains("ni.buffer_flits = 0"), "{e}");
        let p = NiRtlParams {
            vc: 16,
            ..Default::default()
        };
        assert!(emit_ni(&p).unwrap_err().to_string().contains("ni.vc = 16"));
        // Requests on a class-0 VC, responses on a class-1 VC.
        for (vc, resp_vc, key) in [
            (2, 2, "ni.vc = 2: must be a class-0 VC"),
            (0, 1, "ni.resp_vc = 1: must be a class-1 VC, in 2..=3"),
            (0, 4, "ni.resp_vc = 4: must be a class-1 VC, in 2..=3"),
        ] {
            let p = NiRtlParams {
                vc,
                resp_vc,
                ..Default::default()
            };
            let e = emit_ni(&p).unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
        let p = NiRtlParams {
            vcs_per_class: 9,
            ..Default::default()
        };
        let e = emit_ni(&p).unwrap_err().to_string();
        assert!(e.contains("ni.vcs_per_class = 9"), "{e}");
        for bad in [0, 1, 3, 12, 64] {
            let p = NiRtlParams {
                tx_ahead: bad,
                ..Default::default()
            };
            let e = emit_ni(&p).unwrap_err().to_string();
            assert!(
                e.contains(&format!(
                    "ni.tx_ahead = {bad}: must be a power of two in 2..=32"
                )),
                "{e}"
            );
        }
        let mut p = NiRtlParams::default();
        p.ni.channels = 0;
        assert!(emit_ni(&p)
            .unwrap_err()
            .to_string()
            .contains("ni.channels = 0"));
        let mut p = NiRtlParams::default();
        p.ni.channels = 16;
        p.ni.pkt_slots = 64;
        p.ni.mailbox_msg_bytes = 256;
        assert!(emit_ni(&p).unwrap_err().to_string().contains("<= 65536"));
    }
}
