//! The packets the receive agent sends into the NI in the general mode
//! (see [`NiBench::rx_packet`]), and the forged acknowledgements it sends
//! while one of the NI's messages is still leaving.
//!
//! A packet is made in phases, each drawing from the run's random stream
//! in a fixed order: what it is, how it is damaged, its fields, the read
//! request it may carry, the damage to its fields, header and footer,
//! payload, the damage to its words, and the VC class it goes on.

use super::{NiBench, REGION};
use exanet_sim::ni::rdma_rx::NACK_READ_BUSY;
use exanet_sim::ni::rdma_tx::ReadRequest;
use exanet_sim::ni::{regs, Packet};
use exanet_sim::packet::coords::Coords;
use exanet_sim::packet::footer::Footer;
use exanet_sim::packet::header::{header_ecc, Header, PacketType, HEADER_BITS};
use exanet_sim::rng::Rng;

/// Of the packets not otherwise upset in their header, those that get one
/// flipped header bit (see [`NiBench::header_upset`]).
const HEADER_UPSET_CHANCE: f64 = 0.3;
/// The same at an engine point with `header_walk=1`: a quarter of its
/// packets are allreduce fragments (no upsets) and its runs see fewer
/// general packets, so the walk needs the higher share to pass every one
/// of the 128 positions within a campaign's 30,000 cycles.
const ENGINE_HEADER_UPSET_CHANCE: f64 = 0.7;
/// The step of the walk over the header's bit positions (odd, so every
/// position comes once per `HEADER_BITS` flips; 45 interleaves the fields:
/// consecutive flips land in different ones).
const HEADER_FLIP_STRIDE: u64 = 45;

/// A receive-path packet before its words are built.
struct Draft {
    /// 0 data, 1 mailbox, 2 ack / nack of an NI message, 3 completion /
    /// read nack, 4 read request.
    class: u8,
    /// The damage: 0 none, else the code the damage phases decode.
    kind: u64,
    /// Payload bytes; for data packets, offset in block `block` of the
    /// landing area's first half, whose address is `base`.
    size: u64,
    off: u64,
    block: u64,
    base: u64,
    dest: Coords,
    flags: u8,
    ptype: PacketType,
    pdid: u16,
    src: Coords,
    txid: u16,
}

/// A packet's type, flags, PDID, source and txid.
type Fields = (PacketType, u8, u16, Coords, u16);

/// What a read request asks for: `len` bytes at `addr` (the landing
/// area's second half unless damaged), landing as `req` says.
struct ReadShape {
    len: u64,
    addr: u64,
    req: ReadRequest,
}

impl NiBench {
    /// A packet for the receive path (general mode), good or damaged in one
    /// way: an RdmaWrite / RdmaReadResp into the landing area (`last` and
    /// `first` random, (src, txid) often from a small pool), a mailbox
    /// message from one of a few senders, an acknowledgement of one of the
    /// NI's messages (MailboxAck, MailboxNack "full", "payload CRC" or
    /// another reason, or a stale one), or an RdmaCompletion / Nack.
    /// Damage: forged PDID, outside the window, beyond `2^addr_bits`,
    /// crossing a P boundary, misrouted, size 0, Ack type, unknown type,
    /// payload bit flip, single (corrected) and double header errors,
    /// footer bit flip, a word dropped or added, header only, sent on a VC
    /// of the other message class (WrongClass). While draining: only a
    /// clean MailboxAck of an outstanding message. Returns the words and
    /// the message class of the VC to send them on (the class of the
    /// header's type, but for WrongClass).
    pub(super) fn rx_packet(&mut self, rng: &mut Rng) -> (Vec<u128>, usize) {
        let storm = !self.only_bad && !self.draining && self.rx.read_storm > 0;
        if !self.only_bad && !self.draining && self.rx.read_storm == 0 {
            if let Some(x) = self.maybe_ar_fragment(rng) {
                return x;
            }
        }
        let class = self.rx_packet_class(rng);
        let kind = self.rx_damage_kind(rng, class);
        let mut d = self.rx_fields(rng, class, kind);
        let mut rd = self.read_shape(rng, storm, class == 4);
        self.damage_fields(rng, &mut d, &mut rd);
        let (h, mut f) = header_footer(rng, &d, &rd);
        let payload = payload(rng, &d, &rd, &mut f);
        let mut words = Packet::build(h, f, &payload).words;
        self.damage_words(rng, &d, &mut words);
        self.header_upset(rng, &d, &mut words);
        // The class of the header's type; a few damaged ones on the other
        // class's VCs (rejected WrongClass when nothing else is wrong).
        let mclass = d.ptype.class();
        if (92..=96).contains(&d.kind) {
            self.cov.wrong_class_sent += 1;
            (words, 1 - mclass)
        } else {
            (words, mclass)
        }
    }

    /// What the packet is (see [`Draft::class`]): only data or read
    /// requests when only bad packets go in, only acknowledgements while
    /// draining, read requests during a read storm, else a random mix.
    fn rx_packet_class(&mut self, rng: &mut Rng) -> u8 {
        if self.only_bad {
            if rng.chance(0.25) {
                4
            } else {
                0
            }
        } else if self.draining {
            2
        } else if self.rx.read_storm > 0 {
            // Read requests back to back: the read queue fills (refused).
            self.rx.read_storm -= 1;
            4
        } else {
            match rng.below(100) {
                0..=44 => 0,
                45..=61 => 1,
                62..=76 => 2,
                77..=88 => 3,
                _ => 4,
            }
        }
    }

    /// How the packet is damaged (0: not at all): always when only bad
    /// packets go in (a damage every packet type is rejected for), never
    /// while draining, else at random.
    fn rx_damage_kind(&self, rng: &mut Rng, class: u8) -> u64 {
        if self.only_bad {
            let bad = [5, 15, 23, 27, 31, 35, 38, 40, 64, 72, 80, 86, 87, 92];
            let k = bad[rng.below(bad.len() as u64) as usize];
            if k == 23 && self.params.ni.addr_bits == 42 {
                5
            } else {
                k
            }
        } else if self.draining {
            0
        } else if rng.chance(if class == 0 { 0.5 } else { 0.3 }) {
            5 + rng.below(92)
        } else {
            0
        }
    }

    /// The packet's fields by what it is: a data packet into the landing
    /// area's first half with (src, txid) mostly from the pool; a message
    /// from a sender, mostly with the MBOX_CTRL PDID; an acknowledgement of
    /// an outstanding message of the NI (sometimes stale); a read request;
    /// or a completion / nack with random fields.
    fn rx_fields(&self, rng: &mut Rng, class: u8, kind: u64) -> Draft {
        let pm = self.params.ni.max_payload_bytes as u64;
        let size = 1 + rng.below(pm);
        let off = rng.below(pm - size + 1);
        // Data packets land in the first half of the landing area.
        let block = rng.below(REGION / 2 / pm);
        let base = self.rx.land + block * pm;
        let (size, (ptype, flags, pdid, src, txid)) = match class {
            0 => (size, self.data_fields(rng)),
            1 => self.message_fields(rng),
            2 => (0, self.ack_fields(rng)),
            4 => (16, self.read_req_fields(rng)),
            _ => (0, response_fields(rng)),
        };
        Draft {
            class,
            kind,
            size,
            off,
            block,
            base,
            dest: self.me,
            flags,
            ptype,
            pdid,
            src,
            txid,
        }
    }

    /// An RdmaWrite or RdmaReadResp with window 0's PDID, (src, txid)
    /// mostly from the pool.
    fn data_fields(&self, rng: &mut Rng) -> Fields {
        let t = if rng.chance(0.7) {
            PacketType::RdmaWrite
        } else {
            PacketType::RdmaReadResp
        };
        let (s, x) = if rng.chance(0.8) {
            self.rx.keys[rng.below(self.rx.keys.len() as u64) as usize]
        } else {
            (
                Coords::from_bits(rng.bits(14) as u32).expect("14-bit coordinates"),
                rng.bits(14) as u16,
            )
        };
        (t, 0, self.rx.pdid, s, x)
    }

    /// A mailbox message from one of the senders, mostly with the
    /// MBOX_CTRL PDID, sometimes longer than a message may be. Returns its
    /// size and fields.
    fn message_fields(&self, rng: &mut Rng) -> (u64, Fields) {
        let pm = self.params.ni.max_payload_bytes as u64;
        let mb = self.golden.axil_read_priv(regs::MBOX_CTRL);
        let pdid = if rng.chance(0.8) {
            mb as u16
        } else {
            rng.bits(16) as u16
        };
        let size = match rng.below(20) {
            0 => self.params.ni.mailbox_msg_bytes as u64 + 1 + rng.below(16),
            _ => 1 + rng.below(self.params.ni.mailbox_msg_bytes as u64),
        }
        .min(pm);
        let s = self.rx.senders[rng.below(self.rx.senders.len() as u64) as usize];
        (size, (PacketType::Mailbox, 0, pdid, s, rng.bits(14) as u16))
    }

    /// An acknowledgement of one of the NI's outstanding messages (a
    /// random one when none is): MailboxAck, or MailboxNack "full",
    /// "payload CRC" or another reason; sometimes stale (another source,
    /// PDID or slot).
    fn ack_fields(&self, rng: &mut Rng) -> Fields {
        let n = &self.params.ni;
        let slots = (n.channels * n.pkt_slots) as u64;
        let mut flags = 0u8;
        let (mut s, mut pd, mut tx) = match self.rx.outstanding.len() {
            0 => (
                Coords::from_bits(rng.bits(22) as u32).expect("22-bit coordinates"),
                rng.bits(16) as u16,
                rng.below(slots + 2) as u16,
            ),
            k => self.rx.outstanding[rng.below(k as u64) as usize],
        };
        let t = if self.draining || rng.chance(0.5) {
            PacketType::MailboxAck
        } else {
            flags = match rng.below(10) {
                0..=3 => 0, // full: retry
                4..=5 => 6, // payload CRC: retry
                _ => [1, 2, 3, 4, 5, 7, 8, 9, 10][rng.below(9) as usize],
            };
            PacketType::MailboxNack
        };
        if !self.draining && rng.chance(0.15) {
            // Stale: another source, PDID or slot.
            match rng.below(3) {
                0 => {
                    s = Coords::from_bits(s.to_bits() ^ 1 << rng.below(22))
                        .expect("22-bit coordinates")
                }
                1 => pd ^= 1 + rng.below(0xFFFF) as u16,
                _ => tx = rng.below(slots + 2) as u16,
            }
        }
        (t, flags, pd, s, tx)
    }

    /// A read request with window 0's PDID, from a pool source half the
    /// time.
    fn read_req_fields(&self, rng: &mut Rng) -> Fields {
        let s = if rng.chance(0.5) {
            self.rx.keys[rng.below(self.rx.keys.len() as u64) as usize].0
        } else {
            Coords::from_bits(rng.bits(22) as u32).expect("22-bit coordinates")
        };
        (
            PacketType::RdmaReadReq,
            0,
            self.rx.pdid,
            s,
            rng.bits(14) as u16,
        )
    }

    /// The bytes a read request asks for, in the second half of the
    /// landing area (no data packet writes there: the bytes the RTL reads
    /// are the golden model's whatever the timing), and where they land.
    /// (Up to 12 packets: long reads take the link from the channels.)
    /// (A storm's reads are long: the engine is slow to drain them.) A
    /// read request may start a storm.
    fn read_shape(&mut self, rng: &mut Rng, storm: bool, is_rd: bool) -> ReadShape {
        let pm = self.params.ni.max_payload_bytes as u64;
        let rd_len = match rng.below(100) {
            _ if storm => 3 * pm + 1 + rng.below(9 * pm),
            0..=59 => 1 + rng.below(64),
            60..=94 => 1 + rng.below(3 * pm),
            _ => 1 + rng.below(12 * pm),
        };
        let rd_addr = self.rx.land + REGION / 2 + rng.below(REGION / 2 - rd_len + 1);
        let mut rd_req = ReadRequest {
            land: rng.bits(42).min((1 << 42) - rd_len),
            len: rd_len as u32,
        };
        if rng.chance(0.3) {
            rd_req.land &= !0xFFF;
        }
        if is_rd && !self.only_bad && self.rx.read_storm == 0 && rng.chance(0.15) {
            // More than the read queue holds: the last ones are refused
            // (Nack READ_BUSY) unless the engine serves fast enough.
            self.rx.read_storm = self.params.ni.read_queue_depth as u64 + 1 + rng.below(4);
        }
        ReadShape {
            len: rd_len,
            addr: rd_addr,
            req: rd_req,
        }
    }

    /// Damage to the fields (by `kind`): forged PDID, outside window 0,
    /// beyond `2^addr_bits`, past window 0's end, crossing a P boundary,
    /// misrouted, Ack type, size 0.
    fn damage_fields(&self, rng: &mut Rng, d: &mut Draft, rd: &mut ReadShape) {
        let pm = self.params.ni.max_payload_bytes as u64;
        let lim = 1u64 << self.params.ni.addr_bits;
        let (class, is_rd) = (d.class, d.class == 4);
        match d.kind {
            5..=14 if class <= 1 || is_rd => d.pdid ^= 1 + rng.below(0xFFFF) as u16, // forged PDID
            15..=22 if class == 0 => d.base += REGION, // outside window 0
            15..=22 if is_rd => rd.addr += REGION / 2 + rng.below(REGION / 4), // outside window 0
            23..=26 if class == 0 && self.params.ni.addr_bits < 42 => d.base = lim + d.block * pm, // beyond 2^addr_bits
            23..=26 if is_rd && self.params.ni.addr_bits < 42 => {
                // ends beyond 2^addr_bits
                rd.addr = lim - rng.below(rd.len.min(REGION / 4));
            }
            27..=30 if is_rd => {
                // runs past the end of window 0
                let a = 1 + rng.below(256);
                rd.addr = self.rx.land + REGION - a;
                rd.req.len = (a + 1 + rng.below(256)) as u32;
            }
            27..=30 if class == 0 && pm > 1 => {
                // crosses a P boundary
                d.size = 2 + rng.below(pm - 1);
                d.off = pm - 1;
            }
            31..=34 => {
                d.dest = Coords::from_bits(self.me.to_bits() ^ (1 << rng.below(14)))
                    .expect("22-bit coordinates")
            }
            35..=37 => d.ptype = PacketType::Ack,
            38..=39 if class <= 1 || is_rd => d.size = 0,
            _ => {}
        }
        if d.ptype == PacketType::Ack {
            d.size = 0;
        }
    }

    /// Damage to the words (by `kind`): payload bit flip, single
    /// (corrected) and double header errors, footer bit flip, a word
    /// dropped or added, header only, a type code no packet has.
    fn damage_words(&mut self, rng: &mut Rng, d: &Draft, words: &mut Vec<u128>) {
        let n = words.len();
        match d.kind {
            40..=51 if d.size > 0 => {
                // payload bit flip inside the size bytes
                let b = rng.below(d.size);
                words[1 + b as usize / 16] ^= 1u128 << (8 * (b % 16) + rng.below(8));
            }
            // single header error: the walk's next bit (a random one at an
            // engine point without `header_walk=1`, whose coverage asserts
            // hold on that stimulus)
            52..=63 if !self.walks_headers() => words[0] ^= 1u128 << rng.below(128),
            52..=63 => self.flip_header_bit(words),
            64..=71 => {
                let a = rng.below(120);
                let b = (a + 1 + rng.below(119)) % 120;
                words[0] ^= 1u128 << a | 1u128 << b; // double error (body + check bits)
                self.cov.hdr_doubles += 1;
            }
            72..=79 => words[n - 1] ^= 1u128 << rng.below(128), // footer bit flip
            80..=83 if n > 1 => {
                words.remove(1 + rng.below(n as u64 - 1) as usize);
            }
            84..=85 if n < self.rx.pkt => words.insert(1, rng.next_u128()),
            86 => words.truncate(1),
            87..=91 => {
                // a type code no packet has, with a valid ECC
                let unknown = [0x00u128, 0x05, 0x0F, 0x16, 0x1F][rng.below(5) as usize];
                let body = (words[0] & !(0x1F << 43) | unknown << 43) & ((1 << 112) - 1);
                words[0] = body | (header_ecc(body) as u128) << 112;
            }
            _ => {}
        }
    }

    /// A single upset of the header on top of the packet's own damage (or
    /// none), for a third of the packets outside a drain and the
    /// only-bad mode: the NI must correct it (SECDED) and decide the packet
    /// as if it had none, as the golden model does. Not on a packet whose
    /// header is already upset (`kind` 52..=71: one more bit would make a
    /// single error double, a double one a triple). Not at an engine point
    /// without `header_walk=1` either (its fixed-seed coverage asserts
    /// hold on the stimulus without these).
    fn header_upset(&mut self, rng: &mut Rng, d: &Draft, words: &mut [u128]) {
        if self.draining || self.only_bad || !self.walks_headers() || (52..=71).contains(&d.kind) {
            return;
        }
        let chance = if self.has_engine() {
            ENGINE_HEADER_UPSET_CHANCE
        } else {
            HEADER_UPSET_CHANCE
        };
        if rng.chance(chance) {
            self.flip_header_bit(words);
        }
    }

    /// Flip the header bit at the next position of the walk over all 128
    /// (`HEADER_FLIP_STRIDE` apart, odd: every position once per 128
    /// flips, the fields interleaved), and count it.
    fn flip_header_bit(&mut self, words: &mut [u128]) {
        let bit = (self.rx.hdr_walk * HEADER_FLIP_STRIDE) % HEADER_BITS as u64;
        self.rx.hdr_walk += 1;
        words[0] ^= 1u128 << bit;
        self.cov.hdr_flips += 1;
        self.cov.hdr_flip_bits |= 1u128 << bit;
    }

    /// A MailboxAck or MailboxNack (full, or a final reason) naming the
    /// NI's message `key` (destination, PDID, txid), as its destination
    /// would send it.
    pub(super) fn early_ack(&self, rng: &mut Rng, key: (Coords, u16, u16)) -> Vec<u128> {
        let (ptype, flags) = match rng.below(4) {
            0 | 1 => (PacketType::MailboxAck, 0),
            2 => (PacketType::MailboxNack, 0),
            _ => (PacketType::MailboxNack, 1 + rng.below(10) as u8),
        };
        let mut h = Header::new(ptype, self.me);
        h.set_pdid(key.1).expect("16-bit PDID");
        let mut f = Footer::new(key.0);
        f.set_first(true).set_last(true);
        f.set_txid(key.2).expect("14-bit txid");
        f.set_flags(flags).expect("8-bit flags");
        Packet::build(h, f, &[]).words
    }
}

/// An RdmaCompletion (a status, rarely an invalid one) or a Nack (a
/// reject reason or READ_BUSY; rarely no valid code) with random fields.
fn response_fields(rng: &mut Rng) -> Fields {
    let flags;
    let t = if rng.chance(0.5) {
        flags = if rng.chance(0.05) {
            3 + rng.below(5) as u8
        } else {
            rng.below(3) as u8
        };
        PacketType::RdmaCompletion
    } else {
        // A reject reason or READ_BUSY; rarely no valid code.
        flags = if rng.chance(0.05) {
            [0, NACK_READ_BUSY + 1, 15][rng.below(3) as usize]
        } else {
            1 + rng.below(NACK_READ_BUSY as u64) as u8
        };
        PacketType::Nack
    };
    (
        t,
        flags,
        rng.bits(16) as u16,
        Coords::from_bits(rng.bits(22) as u32).expect("22-bit coordinates"),
        rng.bits(14) as u16,
    )
}

/// Header and footer: `vaddr` the data packet's or read's address; a data
/// packet's `first`, `last`, `notify` and `seq` random, a read request's
/// `notify` random, every other packet whole (`first`, `last`).
fn header_footer(rng: &mut Rng, d: &Draft, rd: &ReadShape) -> (Header, Footer) {
    let vaddr = match d.class {
        0 => d.base + d.off,
        4 => rd.addr,
        _ => 0,
    };
    let mut h = Header::new(d.ptype, d.dest);
    h.set_vaddr(vaddr & ((1 << 42) - 1))
        .expect("42-bit address")
        .set_pdid(d.pdid)
        .expect("16-bit PDID");
    let mut f = Footer::new(d.src);
    if d.class == 0 {
        f.set_first(rng.chance(0.3))
            .set_last(rng.chance(0.5))
            .set_notify(rng.chance(0.5));
        f.set_seq(rng.bits(14) as u16).expect("14-bit seq");
    } else {
        f.set_first(true).set_last(true);
    }
    if d.class == 4 {
        f.set_notify(rng.chance(0.5));
    }
    f.set_txid(d.txid).expect("14-bit txid");
    f.set_flags(d.flags).expect("8-bit flags");
    (h, f)
}

/// The payload: random bytes, or a read request's (sometimes malformed
/// when not otherwise damaged, which may touch the footer `f`).
fn payload(rng: &mut Rng, d: &Draft, rd: &ReadShape, f: &mut Footer) -> Vec<u8> {
    let mut payload: Vec<u8> = (0..d.size).map(|_| rng.bits(8) as u8).collect();
    if d.class == 4 && d.size == 16 {
        payload = rd.req.to_payload().to_vec();
        if d.kind == 0 && rng.chance(0.1) {
            // A malformed request (FORMAT): length 0, a reserved byte
            // set, landing end beyond 2^42, or not a single packet.
            match rng.below(4) {
                0 => payload[8..12].fill(0),
                1 => payload[12 + rng.below(4) as usize] = 1 + rng.bits(7) as u8,
                2 => {
                    let land = (1u64 << 42) - rng.below(rd.req.len as u64);
                    payload[..8].copy_from_slice(&land.to_le_bytes());
                }
                _ => {
                    match rng.below(3) {
                        0 => f.set_first(false),
                        1 => f.set_last(false),
                        _ => f.set_seq(1 + rng.below(100) as u16).expect("14-bit seq"),
                    };
                }
            }
        }
    }
    payload
}
