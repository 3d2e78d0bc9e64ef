// Converting between `DBusValue` and the body of a libdbus message.
import Glibc

enum Marshaling {
    // MARK: - Writing

    /// Appends `values` to `message`; throws when a value is inconsistent with its declared type.
    static func append(_ values: [DBusValue], to message: RawMessage) throws(DBusCallError) {
        for v in values {
            do { try v.validate() } catch { throw .invalidMessage(error.message) }
        }
        var iter = RawIter()
        LibDBus.initAppend(message, &iter)
        for v in values {
            guard write(v, into: &iter) else { throw .invalidMessage("libdbus refused value \(v.signature)") }
        }
    }

    private static func write(_ value: DBusValue, into iter: UnsafeMutablePointer<RawIter>) -> Bool {
        switch value {
        case .byte(let v): return LibDBus.append(iter, LibDBus.typeByte, v)
        case .bool(let v): return LibDBus.append(iter, LibDBus.typeBoolean, UInt32(v ? 1 : 0))
        case .int16(let v): return LibDBus.append(iter, LibDBus.typeInt16, v)
        case .uint16(let v): return LibDBus.append(iter, LibDBus.typeUInt16, v)
        case .int32(let v): return LibDBus.append(iter, LibDBus.typeInt32, v)
        case .uint32(let v): return LibDBus.append(iter, LibDBus.typeUInt32, v)
        case .int64(let v): return LibDBus.append(iter, LibDBus.typeInt64, v)
        case .uint64(let v): return LibDBus.append(iter, LibDBus.typeUInt64, v)
        case .double(let v): return LibDBus.append(iter, LibDBus.typeDouble, v)
        case .string(let v):
            guard !v.utf8.contains(0) else { return false }
            return LibDBus.append(iter, LibDBus.typeString, string: v)
        case .objectPath(let v): return LibDBus.append(iter, LibDBus.typeObjectPath, string: v.rawValue)
        case .signature(let v): return LibDBus.append(iter, LibDBus.typeSignature, string: v.rawValue)
        case .unixFD(let fd): return LibDBus.append(iter, LibDBus.typeUnixFD, fd.rawValue)
        case .array(let element, let items):
            return container(iter, LibDBus.typeArray, element.signature) { sub in
                if element == .byte {
                    var bytes = [UInt8]()
                    bytes.reserveCapacity(items.count)
                    for case .byte(let b) in items { bytes.append(b) }
                    return LibDBus.appendBytes(sub, bytes)
                }
                for item in items where !write(item, into: sub) { return false }
                return true
            }
        case .dict(let k, let v, let entries):
            return container(iter, LibDBus.typeArray, "{\(k.signature)\(v.signature)}") { sub in
                for e in entries {
                    let ok = container(sub, LibDBus.typeDictEntry, nil) { entry in
                        write(e.key, into: entry) && write(e.value, into: entry)
                    }
                    if !ok { return false }
                }
                return true
            }
        case .struct(let fields):
            return container(iter, LibDBus.typeStruct, nil) { sub in
                for f in fields where !write(f, into: sub) { return false }
                return true
            }
        case .variant(let inner):
            return container(iter, LibDBus.typeVariant, inner.signature) { sub in write(inner, into: sub) }
        }
    }

    private static func container(
        _ iter: UnsafeMutablePointer<RawIter>, _ code: UInt8, _ signature: String?,
        _ body: (UnsafeMutablePointer<RawIter>) -> Bool
    ) -> Bool {
        var sub = RawIter()
        guard LibDBus.openContainer(iter, code, signature, &sub) else { return false }
        guard body(&sub) else {
            LibDBus.abandonContainer(iter, &sub)
            return false
        }
        return LibDBus.closeContainer(iter, &sub)
    }

    // MARK: - Reading

    /// Reads the whole body of `message` (already validated by libdbus).
    static func read(_ message: RawMessage) -> [DBusValue] {
        var iter = RawIter()
        guard LibDBus.initRead(message, &iter) else { return [] }
        var out: [DBusValue] = []
        repeat {
            guard let v = readOne(&iter) else { break }
            out.append(v)
        } while LibDBus.next(&iter)
        return out
    }

    private static func readAll(_ iter: UnsafeMutablePointer<RawIter>) -> [DBusValue] {
        var out: [DBusValue] = []
        while LibDBus.argType(iter) != LibDBus.typeInvalid {
            guard let v = readOne(iter) else { break }
            out.append(v)
            _ = LibDBus.next(iter)
        }
        return out
    }

    /// The full type of the array under `iter`; the shapes BlueZ sends all the time skip the
    /// signature parser.
    private static func containerType(_ iter: UnsafeMutablePointer<RawIter>) -> DBusType? {
        let signature = LibDBus.currentSignature(iter)
        switch signature {
        case "a{sv}": return .dict(key: .string, value: .variant)
        case "a{sa{sv}}": return .dict(key: .string, value: .dict(key: .string, value: .variant))
        case "as": return .array(.string)
        case "ao": return .array(.objectPath)
        case "a{qv}": return .dict(key: .uint16, value: .variant)
        default: return try? SignatureParser.single(signature)
        }
    }

    private static func readOne(_ iter: UnsafeMutablePointer<RawIter>) -> DBusValue? {
        let t = LibDBus.argType(iter)
        switch t {
        case LibDBus.typeByte: return .byte(LibDBus.basic(iter, as: UInt8.self, zero: 0))
        case LibDBus.typeBoolean: return .bool(LibDBus.basic(iter, as: UInt32.self, zero: 0) != 0)
        case LibDBus.typeInt16: return .int16(LibDBus.basic(iter, as: Int16.self, zero: 0))
        case LibDBus.typeUInt16: return .uint16(LibDBus.basic(iter, as: UInt16.self, zero: 0))
        case LibDBus.typeInt32: return .int32(LibDBus.basic(iter, as: Int32.self, zero: 0))
        case LibDBus.typeUInt32: return .uint32(LibDBus.basic(iter, as: UInt32.self, zero: 0))
        case LibDBus.typeInt64: return .int64(LibDBus.basic(iter, as: Int64.self, zero: 0))
        case LibDBus.typeUInt64: return .uint64(LibDBus.basic(iter, as: UInt64.self, zero: 0))
        case LibDBus.typeDouble: return .double(LibDBus.basic(iter, as: Double.self, zero: 0))
        case LibDBus.typeString: return .string(LibDBus.string(iter))
        case LibDBus.typeObjectPath: return .objectPath(ObjectPath(unchecked: LibDBus.string(iter)))
        case LibDBus.typeSignature:
            let text = LibDBus.string(iter)
            return .signature((try? DBusSignature(text)) ?? .empty)
        case LibDBus.typeUnixFD:
            // libdbus hands out a duplicate that the reader owns.
            let fd = LibDBus.basic(iter, as: Int32.self, zero: -1)
            return fd >= 0 ? .unixFD(FileDescriptor(taking: fd)) : nil
        case LibDBus.typeArray:
            let elementCode = LibDBus.elementType(iter)
            if elementCode == LibDBus.typeByte {
                var sub = RawIter()
                LibDBus.recurse(iter, &sub)
                return .array(element: .byte, LibDBus.bytes(&sub).map { .byte($0) })
            }
            guard let type = containerType(iter) else { return nil }
            var sub = RawIter()
            LibDBus.recurse(iter, &sub)
            switch type {
            case .dict(let k, let v):
                var entries: [DBusValue.DictEntry] = []
                while LibDBus.argType(&sub) == LibDBus.typeDictEntry {
                    var entry = RawIter()
                    LibDBus.recurse(&sub, &entry)
                    let pair = readAll(&entry)
                    guard pair.count == 2 else { return nil }
                    entries.append(.init(pair[0], pair[1]))
                    _ = LibDBus.next(&sub)
                }
                return .dict(key: k, value: v, entries)
            case .array(let e):
                return .array(element: e, readAll(&sub))
            default:
                return nil
            }
        case LibDBus.typeStruct:
            var sub = RawIter()
            LibDBus.recurse(iter, &sub)
            return .struct(readAll(&sub))
        case LibDBus.typeVariant:
            var sub = RawIter()
            LibDBus.recurse(iter, &sub)
            return readOne(&sub).map { .variant($0) }
        default:
            return nil
        }
    }
}
