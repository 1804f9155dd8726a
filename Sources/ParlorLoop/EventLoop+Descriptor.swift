/// What a descriptor registered from another module (a UDP socket in ParlorMedia, say) hears from its loop. Called
/// on the loop thread only.
public protocol DescriptorHandler: AnyObject {
    func handleDescriptorEvent(readable: Bool, writable: Bool, hangUp: Bool)
}

/// A registration made through `EventLoop.register(descriptor:interest:handler:)`; keep it to change the interest
/// or to deregister before closing the descriptor.
public struct DescriptorRegistration: Sendable {
    public let fd: Int32
    let id: UInt32
}

extension EventLoop {
    /// Registers a descriptor this loop does not own the type of. `handler` is held strongly until `deregister`.
    /// Loop thread only.
    public func register(descriptor fd: Int32, interest: Interest, handler: DescriptorHandler) throws(SystemError) -> DescriptorRegistration {
        assertInLoop()
        let id = try register(fd: fd, interest: interest, handler: DescriptorHandlerAdapter(handler))
        return DescriptorRegistration(fd: fd, id: id)
    }

    /// Changes what the registration waits for. Loop thread only.
    public func reregister(_ registration: DescriptorRegistration, interest: Interest) {
        reregister(fd: registration.fd, id: registration.id, interest: interest)
    }

    /// Removes the registration; call before closing the descriptor. Loop thread only.
    public func deregister(_ registration: DescriptorRegistration) {
        deregister(fd: registration.fd, id: registration.id)
    }
}

/// Lets an outside handler stand where the loop expects its own `SelectorHandler`.
private final class DescriptorHandlerAdapter: SelectorHandler {
    let handler: DescriptorHandler
    init(_ handler: DescriptorHandler) { self.handler = handler }
    func handleSelectorEvent(readable: Bool, writable: Bool, hangUp: Bool) {
        handler.handleDescriptorEvent(readable: readable, writable: writable, hangUp: hangUp)
    }
}
