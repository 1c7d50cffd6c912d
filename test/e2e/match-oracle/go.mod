module spiderpool-iaas-webhook/test/e2e/match-oracle

go 1.22
