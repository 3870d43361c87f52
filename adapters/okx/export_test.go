package okx

// FundingPerCall is fundingPerCall for the external tests.
const FundingPerCall = fundingPerCall
