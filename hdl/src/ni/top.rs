//! The NI top block: ports, children, parameters, and assembly of the
//! generated body from the sub-block generators (see the `ni` module doc).

use crate::common::crc32::Crc32;
use crate::emit::{emit, Emitted};
use crate::packet::footer::{FooterPack, FooterUnpack};
use crate::packet::header::{HeaderPack, HeaderUnpack};
use anyhow::{bail, Result};
use exanet_sim::ni::NiParams;
use rust_hdl::prelude::*;

/// Parameters of the NI RTL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NiRtlParams {
    /// The golden model's parameters (validated by it).
    pub ni: NiParams,
    /// Credits of the router input VC the NI sends on (its buffer size).
    pub buffer_flits: usize,
    /// VC requests are sent on (4-bit field).
    pub vc: usize,
}

impl Default for NiRtlParams {
    fn default() -> Self {
        NiRtlParams {
            ni: NiParams::default(),
            buffer_flits: 32,
            vc: 0,
        }
    }
}

/// `ceil(log2(n))`, at least 1.
pub fn clog2(n: usize) -> usize {
    (n.max(2).next_power_of_two().trailing_zeros() as usize).max(1)
}

/// Widths and sizes derived from the parameters, and the template keys.
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
    /// Receive buffer index bits (`2^rxa >= 2 + P/16` words).
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

/// Flits of the receive buffer (one maximum packet): the credits a sender
/// starts with.
pub fn rx_buffer_flits(max_payload_bytes: usize) -> usize {
    2 + max_payload_bytes / 16
}

/// Register-file size limits of the phase-1 RTL (message slot bytes are
/// registers: `channels · pkt_slots · mailbox_msg_bytes` bytes).
pub const MAX_SLOT_BYTES: usize = 64 * 1024;

impl Geometry {
    /// Derive, rejecting what the RTL does not support (naming key and rule).
    pub fn new(p: &NiRtlParams) -> Result<Geometry> {
        p.ni.validate()?;
        let n = &p.ni;
        if !(1..=1024).contains(&p.buffer_flits) {
            bail!(
                "ni.buffer_flits = {}: must be in 1..=1024 (credits of the router's local input VC)",
                p.buffer_flits
            );
        }
        if p.vc > 15 {
            bail!("ni.vc = {}: must be in 0..=15 (4-bit VC field)", p.vc);
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

    /// Template keys and values (`@KEY@` in the generators' text).
    fn keys(&self) -> Vec<(&'static str, String)> {
        let n = &self.p.ni;
        vec![
            ("C", self.c.to_string()),
            ("CW", self.cw.to_string()),
            ("CWM1", (self.cw - 1).to_string()),
            ("NC", (1usize << self.cw).to_string()),
            ("NCM1", ((1usize << self.cw) - 1).to_string()),
            ("DQA", self.dqa.to_string()),
            ("DQAM1", (self.dqa - 1).to_string()),
            ("DQD", n.desc_queue_depth.to_string()),
            ("DQW", (self.dqa + 1).to_string()),
            ("DQWM1", self.dqa.to_string()),
            ("S", self.s.to_string()),
            ("SA", self.sa.to_string()),
            ("SAM1", (self.sa - 1).to_string()),
            ("SW", (self.sa + 1).to_string()),
            ("SWM1", self.sa.to_string()),
            ("MW", self.mw.to_string()),
            ("MWA", self.mwa.to_string()),
            ("MWAM1", (self.mwa - 1).to_string()),
            ("MB", n.mailbox_msg_bytes.to_string()),
            ("WIN", self.win.to_string()),
            ("WA", self.wa.to_string()),
            ("WAM1", (self.wa - 1).to_string()),
            ("AB", n.addr_bits.to_string()),
            ("ABM1", (n.addr_bits - 1).to_string()),
            ("P", n.max_payload_bytes.to_string()),
            ("PA", self.pa.to_string()),
            ("PAM1", (self.pa - 1).to_string()),
            ("BUF", self.p.buffer_flits.to_string()),
            ("CRW", self.crw.to_string()),
            ("CRWM1", (self.crw - 1).to_string()),
            ("VC", self.p.vc.to_string()),
            ("MBA", self.mba.to_string()),
            ("MBAM1", (self.mba - 1).to_string()),
            ("MBD", n.mailbox_depth.to_string()),
            ("MBDM1", (n.mailbox_depth - 1).to_string()),
            ("MB16", self.mb16.to_string()),
            ("MB16M1", (self.mb16 - 1).to_string()),
            ("MBWA", self.mbwa.to_string()),
            ("MBWAM1", (self.mbwa - 1).to_string()),
            ("CQA", self.cqa.to_string()),
            ("CQAM1", (self.cqa - 1).to_string()),
            ("CQD", n.cq_depth.to_string()),
            ("CQDM1", (n.cq_depth - 1).to_string()),
            ("RQA", self.rqa.to_string()),
            ("RQAM1", (self.rqa - 1).to_string()),
            ("RQD", n.resp_queue_depth.to_string()),
            ("RQDM1", (n.resp_queue_depth - 1).to_string()),
            ("RDA", self.rda.to_string()),
            ("RDAM1", (self.rda - 1).to_string()),
            ("RDW", (self.rda + 1).to_string()),
            ("RDD", n.read_queue_depth.to_string()),
            ("RDDM1", (n.read_queue_depth - 1).to_string()),
            ("RDNM1", ((1usize << self.rda) - 1).to_string()),
            ("PD", n.poison_depth.to_string()),
            ("PDM1", (n.poison_depth - 1).to_string()),
        ]
    }

    /// Replace every `@KEY@` of `t`; an unknown key is an error (a
    /// generator bug, reported with the key).
    pub fn fill(&self, t: &str) -> Result<String> {
        let mut s = t.to_string();
        for (k, v) in self.keys() {
            s = s.replace(&format!("@{k}@"), &v);
        }
        // A leftover `@KEY@` (upper-case letters and digits) is a generator
        // bug; `@(` and `@ (` are Verilog event controls.
        for (i, _) in s.match_indices('@') {
            let rest = &s[i + 1..];
            let key: String = rest
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                .collect();
            if !key.is_empty() && rest[key.len()..].starts_with('@') {
                bail!("NI generator: unknown template key `@{key}@`");
            }
        }
        Ok(s)
    }

    /// The `(2^bits)`-entry index literal of `v`.
    pub fn lit(bits: usize, v: usize) -> String {
        format!("{bits}'d{v}")
    }
}

/// The NI top (transmit side). See the `ni` module doc for ports and timing.
#[derive(LogicBlock)]
pub struct Ni {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// This node's coordinates.
    pub node: Signal<In, Bits<22>>,
    /// AXI4-Lite AW valid.
    pub s_awvalid: Signal<In, bool>,
    /// AW ready.
    pub s_awready: Signal<Out, bool>,
    /// AW address.
    pub s_awaddr: Signal<In, Bits<20>>,
    /// AWPROT\[0\] (privileged).
    pub s_awprot: Signal<In, bool>,
    /// W valid.
    pub s_wvalid: Signal<In, bool>,
    /// W ready.
    pub s_wready: Signal<Out, bool>,
    /// W data.
    pub s_wdata: Signal<In, Bits<32>>,
    /// B valid.
    pub s_bvalid: Signal<Out, bool>,
    /// B ready.
    pub s_bready: Signal<In, bool>,
    /// B response (0 OKAY, 2 SLVERR).
    pub s_bresp: Signal<Out, Bits<2>>,
    /// AR valid.
    pub s_arvalid: Signal<In, bool>,
    /// AR ready.
    pub s_arready: Signal<Out, bool>,
    /// AR address.
    pub s_araddr: Signal<In, Bits<20>>,
    /// ARPROT\[0\].
    pub s_arprot: Signal<In, bool>,
    /// R valid.
    pub s_rvalid: Signal<Out, bool>,
    /// R ready.
    pub s_rready: Signal<In, bool>,
    /// R data.
    pub s_rdata: Signal<Out, Bits<32>>,
    /// R response.
    pub s_rresp: Signal<Out, Bits<2>>,
    /// AXI4 AR valid.
    pub m_arvalid: Signal<Out, bool>,
    /// AR ready.
    pub m_arready: Signal<In, bool>,
    /// AR address.
    pub m_araddr: Signal<Out, Bits<42>>,
    /// AR burst length - 1.
    pub m_arlen: Signal<Out, Bits<8>>,
    /// AR size (4: 16 bytes).
    pub m_arsize: Signal<Out, Bits<3>>,
    /// AR burst (1: INCR).
    pub m_arburst: Signal<Out, Bits<2>>,
    /// AR user: the PDID.
    pub m_aruser: Signal<Out, Bits<16>>,
    /// R valid.
    pub m_rvalid: Signal<In, bool>,
    /// R ready.
    pub m_rready: Signal<Out, bool>,
    /// R data.
    pub m_rdata: Signal<In, Bits<128>>,
    /// Flit valid.
    pub out_valid: Signal<Out, bool>,
    /// Flit data.
    pub out_data: Signal<Out, Bits<128>>,
    /// Head flit.
    pub out_head: Signal<Out, bool>,
    /// Tail flit.
    pub out_tail: Signal<Out, bool>,
    /// Flit VC.
    pub out_vc: Signal<Out, Bits<4>>,
    /// A credit returns.
    pub credit_in_valid: Signal<In, bool>,
    /// Its VC.
    pub credit_in_vc: Signal<In, Bits<4>>,
    /// The scheduler picks a packet this cycle.
    pub tx_pick: Signal<Out, bool>,
    /// A packet is in progress.
    pub tx_busy: Signal<Out, bool>,
    /// Received flit valid.
    pub in_valid: Signal<In, bool>,
    /// Received flit data.
    pub in_data: Signal<In, Bits<128>>,
    /// Received head flit.
    pub in_head: Signal<In, bool>,
    /// Received tail flit.
    pub in_tail: Signal<In, bool>,
    /// Received flit VC.
    pub in_vc: Signal<In, Bits<4>>,
    /// A receive-buffer credit returns to the sender.
    pub credit_out_valid: Signal<Out, bool>,
    /// Its VC (the packet's).
    pub credit_out_vc: Signal<Out, Bits<4>>,
    /// AXI4 AW valid.
    pub m_awvalid: Signal<Out, bool>,
    /// AW ready.
    pub m_awready: Signal<In, bool>,
    /// AW address (16-byte aligned).
    pub m_awaddr: Signal<Out, Bits<42>>,
    /// AW burst length - 1.
    pub m_awlen: Signal<Out, Bits<8>>,
    /// AW size (4: 16 bytes).
    pub m_awsize: Signal<Out, Bits<3>>,
    /// AW burst (1: INCR).
    pub m_awburst: Signal<Out, Bits<2>>,
    /// AW user: the packet's PDID.
    pub m_awuser: Signal<Out, Bits<16>>,
    /// W valid.
    pub m_wvalid: Signal<Out, bool>,
    /// W ready.
    pub m_wready: Signal<In, bool>,
    /// W data.
    pub m_wdata: Signal<Out, Bits<128>>,
    /// W strobes.
    pub m_wstrb: Signal<Out, Bits<16>>,
    /// W last.
    pub m_wlast: Signal<Out, bool>,
    /// B valid.
    pub m_bvalid: Signal<In, bool>,
    /// B ready.
    pub m_bready: Signal<Out, bool>,
    /// B response (not used yet).
    pub m_bresp: Signal<In, Bits<2>>,
    /// This cycle the receive path decides a packet.
    pub rx_commit: Signal<Out, bool>,
    /// This cycle the receive path holds a checked packet it cannot take:
    /// a queue it needs is full (the golden model's `Busy`).
    pub rx_busy: Signal<Out, bool>,
    header_pack: HeaderPack,
    footer_pack: FooterPack,
    crc32: Crc32<128, 5>,
    header_unpack: HeaderUnpack,
    footer_unpack: FooterUnpack,
    crc_rx: Crc32<128, 5>,
    _body: String,
}

impl Ni {
    /// The NI of `p`; errors name the unsupported key.
    pub fn new(p: &NiRtlParams) -> Result<Ni> {
        let g = Geometry::new(p)?;
        let mut body = String::new();
        body.push_str(&super::axil_regs::verilog(&g)?);
        body.push_str(&super::packetizer::verilog(&g)?);
        body.push_str(&super::rdma_tx::verilog(&g)?);
        body.push_str(&super::axi_master::verilog(&g)?);
        body.push_str(&super::rdma_rx::verilog(&g)?);
        Ok(Ni {
            clock: Default::default(),
            reset: Default::default(),
            node: Default::default(),
            s_awvalid: Default::default(),
            s_awready: Default::default(),
            s_awaddr: Default::default(),
            s_awprot: Default::default(),
            s_wvalid: Default::default(),
            s_wready: Default::default(),
            s_wdata: Default::default(),
            s_bvalid: Default::default(),
            s_bready: Default::default(),
            s_bresp: Default::default(),
            s_arvalid: Default::default(),
            s_arready: Default::default(),
            s_araddr: Default::default(),
            s_arprot: Default::default(),
            s_rvalid: Default::default(),
            s_rready: Default::default(),
            s_rdata: Default::default(),
            s_rresp: Default::default(),
            m_arvalid: Default::default(),
            m_arready: Default::default(),
            m_araddr: Default::default(),
            m_arlen: Default::default(),
            m_arsize: Default::default(),
            m_arburst: Default::default(),
            m_aruser: Default::default(),
            m_rvalid: Default::default(),
            m_rready: Default::default(),
            m_rdata: Default::default(),
            out_valid: Default::default(),
            out_data: Default::default(),
            out_head: Default::default(),
            out_tail: Default::default(),
            out_vc: Default::default(),
            credit_in_valid: Default::default(),
            credit_in_vc: Default::default(),
            tx_pick: Default::default(),
            tx_busy: Default::default(),
            in_valid: Default::default(),
            in_data: Default::default(),
            in_head: Default::default(),
            in_tail: Default::default(),
            in_vc: Default::default(),
            credit_out_valid: Default::default(),
            credit_out_vc: Default::default(),
            m_awvalid: Default::default(),
            m_awready: Default::default(),
            m_awaddr: Default::default(),
            m_awlen: Default::default(),
            m_awsize: Default::default(),
            m_awburst: Default::default(),
            m_awuser: Default::default(),
            m_wvalid: Default::default(),
            m_wready: Default::default(),
            m_wdata: Default::default(),
            m_wstrb: Default::default(),
            m_wlast: Default::default(),
            m_bvalid: Default::default(),
            m_bready: Default::default(),
            m_bresp: Default::default(),
            rx_commit: Default::default(),
            rx_busy: Default::default(),
            header_pack: HeaderPack::new()?,
            footer_pack: FooterPack::new()?,
            crc32: Crc32::new()?,
            header_unpack: HeaderUnpack::new()?,
            footer_unpack: FooterUnpack::new()?,
            crc_rx: Crc32::new()?,
            _body: body,
        })
    }
}

impl Logic for Ni {
    /// Simulated with Verilator only (see the module doc).
    fn update(&mut self) {}

    fn connect(&mut self) {
        for s in [
            &mut self.s_awready,
            &mut self.s_wready,
            &mut self.s_bvalid,
            &mut self.s_arready,
            &mut self.s_rvalid,
            &mut self.m_arvalid,
            &mut self.m_rready,
            &mut self.out_valid,
            &mut self.out_head,
            &mut self.out_tail,
            &mut self.tx_pick,
            &mut self.tx_busy,
        ] {
            s.connect();
        }
        self.s_bresp.connect();
        self.s_rresp.connect();
        self.s_rdata.connect();
        self.m_araddr.connect();
        self.m_arlen.connect();
        self.m_arsize.connect();
        self.m_arburst.connect();
        self.m_aruser.connect();
        self.out_data.connect();
        self.out_vc.connect();
        self.credit_out_valid.connect();
        self.credit_out_vc.connect();
        self.m_awvalid.connect();
        self.m_awaddr.connect();
        self.m_awlen.connect();
        self.m_awsize.connect();
        self.m_awburst.connect();
        self.m_awuser.connect();
        self.m_wvalid.connect();
        self.m_wdata.connect();
        self.m_wstrb.connect();
        self.m_wlast.connect();
        self.m_bready.connect();
        self.rx_commit.connect();
        self.rx_busy.connect();
        self.header_unpack.word.connect();
        self.footer_unpack.word.connect();
        let c = &mut self.crc_rx;
        c.clock.connect();
        c.reset.connect();
        c.start.connect();
        c.valid.connect();
        c.data.connect();
        c.bytes.connect();
        let h = &mut self.header_pack;
        h.fpga_offset.connect();
        h.path.connect();
        h.reserved.connect();
        h.vaddr.connect();
        h.size.connect();
        h.ptype.connect();
        h.dest.connect();
        h.pdid.connect();
        h.vc.connect();
        let f = &mut self.footer_pack;
        f.payload_crc.connect();
        f.user.connect();
        f.ttl.connect();
        f.seq.connect();
        f.notify.connect();
        f.last.connect();
        f.first.connect();
        f.flags.connect();
        f.src.connect();
        f.txid.connect();
        let c = &mut self.crc32;
        c.clock.connect();
        c.reset.connect();
        c.start.connect();
        c.valid.connect();
        c.data.connect();
        c.bytes.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(self._body.clone())
    }
}

/// Top module name of a parameter point, e.g. `exanet_ni_c4_d16_s4_m64_p256_a40_w8_b32_v0`.
pub fn ni_top_name(p: &NiRtlParams) -> String {
    let n = &p.ni;
    format!(
        "exanet_ni_c{}_d{}_s{}_m{}_p{}_a{}_w{}_b{}_v{}",
        n.channels,
        n.desc_queue_depth,
        n.pkt_slots,
        n.mailbox_msg_bytes,
        n.max_payload_bytes,
        n.addr_bits,
        n.windows,
        p.buffer_flits,
        p.vc
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
        }
    }

    /// The default and a small odd point lint clean, ports as documented.
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
            vc: 1,
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
            ] {
                assert!(top.contains(decl), "{} lacks `{decl}`", e.top);
            }
            assert!(!e.text().contains('$'));
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
