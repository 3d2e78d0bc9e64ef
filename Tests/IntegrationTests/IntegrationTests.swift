// IntegrationTests
