import GatewayCore
import Foundation
exit(await GatewayCommand.run(Array(CommandLine.arguments.dropFirst())))
