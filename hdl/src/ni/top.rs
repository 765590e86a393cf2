//! The NI top block: ports, children, parameters, and assembly of the
//! generated body from the sub-block generators (see the `ni` module doc).

use super::codes::Codes;
use super::records::Records;
use crate::allreduce::ar_check::ArCheck;
use crate::allreduce::reduce_alu::ReduceAlu;
use crate::common::crc32::Crc32;
use crate::emit::{emit, Emitted};
use crate::packet::footer::{FooterPack, FooterUnpack};
use crate::packet::header::{HeaderPack, HeaderUnpack};
use anyhow::Result;
use rust_hdl::prelude::*;

pub use super::geometry::{
    clog2, rx_buffer_flits, rx_class1_flits, rx_packet_flits, Geometry, Keys, NiRtlParams,
    MAX_SLOT_BYTES,
};

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
            /// The allreduce engine's registers and descriptor check: one
            /// with an engine (`ni.ar_communicators > 0`), else none.
            ar: Vec<ArCheck>,
            /// The allreduce engine's combining datapath (one 128-bit flit
            /// per cycle): one with an engine, else none.
            alu: Vec<ReduceAlu<128>>,
            _body: String,
        }

        impl Ni {
            /// Every port at its default, every child new, and the body.
            fn assemble(body: String, ar: Vec<ArCheck>, alu: Vec<ReduceAlu<128>>) -> Result<Ni> {
                Ok(Ni {
                    $( $port: Default::default(), )*
                    $( $child: <$cty>::new()?, )*
                    ar,
                    alu,
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
        /// R response: SLVERR (2) / DECERR (3) mark the beat's data bad
        /// (read as zero; the packet's payload CRC is inverted).
        m_rresp: In Bits<2>,
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
        /// B response: SLVERR (2) / DECERR (3) make what the write posts
        /// MEM_ERROR.
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
        /// Interrupt (level, registered): some STATUS bit that
        /// IRQ_ENABLE enables was set in the previous cycle.
        irq: Out bool,
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
        Ni::of(&Geometry::new(p)?)
    }

    fn of(g: &Geometry) -> Result<Ni> {
        let (ar, alu) = if g.ar {
            (
                vec![ArCheck::new(&super::allreduce::check_params(g))?],
                vec![ReduceAlu::<128>::new()?],
            )
        } else {
            (Vec::new(), Vec::new())
        };
        Ni::assemble(body(g, false)?, ar, alu)
    }
}

/// The generated body of the NI of `g`: the sub-block templates rendered
/// with the golden model's numbers ([`Codes`], [`Records`]); `marked`
/// renders every golden number as its name instead (the drift test).
pub fn body(g: &Geometry, marked: bool) -> Result<String> {
    let c = Codes::new(g, marked)?;
    let r = Records::new(marked, g.keys().tr);
    let mut body = String::new();
    body.push_str(&super::axil_regs::verilog(g, &c, &r)?);
    body.push_str(&super::packetizer::verilog(g, &c)?);
    body.push_str(&super::rdma_tx::verilog(g, &c, &r)?);
    body.push_str(&super::axi_master::verilog(g)?);
    body.push_str(&super::rdma_rx::verilog(g, &c, &r)?);
    body.push_str(&super::allreduce::verilog(g, &c, &r)?);
    body.push_str(&super::trace::verilog(g, &c, &r, marked)?);
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
        for a in &mut self.ar {
            a.clock.connect();
            a.reset.connect();
            a.node.connect();
            a.wr.connect();
            a.wr_addr.connect();
            a.wr_data.connect();
            a.rd_addr.connect();
            a.chk.connect();
            a.d_op.connect();
            a.d_dtype.connect();
            a.d_count.connect();
            a.d_src.connect();
            a.d_dst.connect();
            a.d_comm.connect();
            a.d_pdid.connect();
            a.run.connect();
            a.run_on.connect();
            a.run_next.connect();
            a.seq_adv.connect();
            a.fq_comm.connect();
        }
        for a in &mut self.alu {
            a.clock.connect();
            a.reset.connect();
            a.in_valid.connect();
            a.op.connect();
            a.dtype.connect();
            a.a.connect();
            a.b.connect();
        }
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(self._body.clone())
    }
}

/// Top module name of a parameter point, e.g. `exanet_ni_c4_d16_s4_m64_p256_a40_w8_b32_v0r2q2_t8`.
pub fn ni_top_name(p: &NiRtlParams) -> String {
    let n = &p.ni;
    let ar = match n.ar_communicators {
        0 => String::new(),
        k => format!("_ar{k}"),
    };
    format!(
        "exanet_ni_c{}_d{}_s{}_m{}_p{}_a{}_w{}_b{}_v{}r{}q{}_t{}{ar}",
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
    use exanet_sim::ni::NiParams;

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
                "[1:0] m_rresp;",
                "[127:0] out_data;",
                "[15:0] m_aruser;",
                " tx_pick;",
                "[127:0] in_data;",
                "[15:0] m_wstrb;",
                " rx_commit;",
                " rx_busy;",
                " rx_class;",
                " rsp_pick;",
                " irq;",
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

    /// With the allreduce engine (`ni.ar_communicators > 0`, emitted by
    /// `exanet generate`'s path): lint clean at the default and a small
    /// point, the child instantiated, the top named `_ar<communicators>`.
    #[test]
    fn engine_points_lint_clean() {
        let mut d = NiRtlParams::default();
        d.ni.ar_communicators = 4;
        let mut s = small();
        s.ni.ar_communicators = 1;
        s.ni.ar_queue_depth = 3;
        s.ni.torus_dims = [3, 1, 2];
        for p in [d, s] {
            let e = emit_ni(&p).unwrap();
            assert!(e.top.ends_with(&format!("_ar{}", p.ni.ar_communicators)));
            // The child is instantiated and driven: its check input and
            // its status output appear in the top module.
            let top = &e.modules.last().unwrap().1;
            assert!(
                top.contains("ar_0_chk") && top.contains("ar_0_status"),
                "{top}"
            );
            if std::env::var("EXANET_DUMP_NI").is_ok() {
                std::fs::write("/tmp/ni_ar.v", e.text()).unwrap();
            }
            assert!(!e.text().contains('$'));
            assert_lint_clean(&e);
        }
        // Without an engine, none of it.
        let e = emit_ni(&NiRtlParams::default()).unwrap();
        assert!(!e.text().contains("ar_0_chk") && !e.top.contains("_ar"));
    }

    /// The allreduce completions waiting for CQ room (`aw`) hold one more
    /// than `ni.ar_queue_depth` (golden `Engine::post`'s bound: the running
    /// collective's completion on top of the queued descriptors'), with
    /// the pointers wrapping at that count; the descriptor queue (`aq`)
    /// keeps `ar_queue_depth`.
    #[test]
    fn waiting_completions_hold_one_more_than_the_queue() {
        for depth in [1usize, 3, 8] {
            let mut p = small();
            p.ni.ar_communicators = 1;
            p.ni.ar_queue_depth = depth;
            p.ni.torus_dims = [3, 1, 2];
            let e = emit_ni(&p).unwrap();
            let top = &e.modules.last().unwrap().1;
            let n = depth + 1;
            let a = crate::ni::geometry::clog2(n);
            assert!(
                top.contains(&format!("aw_mem [0:{}]", (1usize << a) - 1)),
                "depth {depth}"
            );
            if n != 1 << a {
                let wrap = format!("(aw_tail == {a}'d{depth}) ? {a}'d0");
                assert!(top.contains(&wrap), "depth {depth}: {wrap}");
            } else {
                assert!(!top.contains("(aw_tail == "), "depth {depth}: no wrap");
            }
            let qa = crate::ni::geometry::clog2(depth);
            assert!(
                top.contains(&format!("aq_mem [0:{}]", (1usize << qa) - 1)),
                "depth {depth}: the descriptor queue keeps its size"
            );
            let aq_wrap = format!("(aq_tail == {qa}'d{}) ? {qa}'d0", depth - 1);
            assert!(
                top.contains(&aq_wrap) || depth == 1 << qa,
                "depth {depth}: {aq_wrap}"
            );
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
        // The allreduce engine is generated (`engine_points_lint_clean`);
        // past the communicator id's 4 bits it is refused naming the key.
        let mut p = NiRtlParams::default();
        p.ni.ar_communicators = 17;
        let e = emit_ni(&p).unwrap_err().to_string();
        assert!(e.contains("ar_communicators") && e.contains("17"), "{e}");
    }
}
